"""The cgroup and /proc readers against a real pinned process on this machine."""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plimsoll.metrics.cgroup import (
    CgroupPaths,
    CgroupReadError,
    read_limits,
    read_sample,
    v1_mounts,
    v1_paths,
)
from plimsoll.metrics.sampler import LocalSource, Sampler
from plimsoll.metrics.source import Window
from tests.metrics.conftest import MakeCgroup

MIB = 1 << 20


async def _sampled_window(source: LocalSource, lead: float) -> Window:
    """Sample for `lead` s, then a 2 s window, then 0.3 s more so a reading lands past
    its end; the source is stopped and the window returned."""
    source.start()
    await asyncio.sleep(lead)
    start = datetime.now(UTC)
    await asyncio.sleep(2.0)
    window = Window(start, datetime.now(UTC))
    await asyncio.sleep(0.3)
    await source.stop()
    return window


async def test_a_pinned_burner_uses_its_quota_and_is_throttled(cgroup_v1: MakeCgroup) -> None:
    group = cgroup_v1(cpu=0.5, memory=256 * MIB)
    group.spawn_burner(mib=48)
    sampler = Sampler.for_cgroup(group.paths, interval=0.2)
    source = LocalSource({"target": sampler})
    window = await _sampled_window(source, lead=0.5)

    usage = (await source.usage(window))["target"]
    assert usage.missing == []
    assert usage.source == "cgroup"
    assert usage.cpu_limit_cores == 0.5
    assert usage.memory_limit_bytes == 256 * MIB
    # The quota is a ceiling: on a busy shared host the burner may get less, never more.
    assert usage.cpu_mean_cores is not None
    assert usage.cpu_peak_cores is not None
    assert usage.memory_max_bytes is not None
    assert usage.memory_mean_bytes is not None
    assert 0.2 < usage.cpu_mean_cores <= 0.55
    assert usage.cpu_peak_cores <= 0.65  # 200 ms samples of a 100 ms CFS period
    assert usage.throttled_ratio is not None
    assert 0 <= usage.throttled_ratio <= 1
    if usage.cpu_mean_cores > 0.45:  # it ran up against its quota: the kernel throttled it
        assert usage.throttled_ratio > 0
    assert usage.memory_max_bytes >= 48 * MIB
    assert usage.memory_mean_bytes >= 48 * MIB
    assert usage.oom_kills == 0


def test_an_oom_kill_is_counted(cgroup_v1: MakeCgroup) -> None:
    group = cgroup_v1(cpu=None, memory=32 * MIB)
    before = read_sample(group.paths, at=0.0)
    with pytest.raises(AssertionError, match="did not start"):
        group.spawn_burner(mib=64)  # killed by the kernel while filling its memory
    after = read_sample(group.paths, at=1.0)
    assert before.oom_kills == 0
    assert after.oom_kills == 1
    assert read_limits(group.paths).cpu_cores is None


async def test_proc_fallback_agrees_with_the_cgroup(cgroup_v1: MakeCgroup) -> None:
    group = cgroup_v1(cpu=0.5)
    burner = group.spawn_burner(mib=16)
    by_cgroup = Sampler.for_cgroup(group.paths, interval=0.2)
    by_proc = Sampler.for_process_group(os.getpgid(burner.pid), interval=0.2)
    source = LocalSource({"cgroup": by_cgroup, "proc": by_proc})
    window = await _sampled_window(source, lead=0.4)

    usage = await source.usage(window)
    cgroup, proc = usage["cgroup"], usage["proc"]
    assert proc.missing == ["proc: the kernel does not report OOM kills for this group"]
    assert proc.source == "proc"
    assert proc.cpu_mean_cores == pytest.approx(cgroup.cpu_mean_cores, rel=0.1)
    # RSS of the one process against the group's working set: same order, same memory held.
    assert proc.memory_max_bytes == pytest.approx(cgroup.memory_max_bytes, rel=0.3)


async def test_a_vanished_group_is_missing_with_the_reason(cgroup_v1: MakeCgroup) -> None:
    group = cgroup_v1(cpu=0.5)
    burner = group.spawn_burner(mib=8)
    sampler = Sampler.for_process_group(os.getpgid(burner.pid), interval=0.1)
    start = datetime.now(UTC)
    sampler.sample_once()
    os.killpg(burner.pid, signal.SIGKILL)
    burner.wait()
    sampler.sample_once()
    usage = sampler.usage(Window(start, datetime.now(UTC)))
    assert usage.cpu_mean_cores is None
    assert any("no process is left in process group" in m for m in usage.missing)


def test_missing_files_name_the_file(tmp_path: Path) -> None:
    paths = v1_paths("nowhere", {"cpu": tmp_path, "cpuacct": tmp_path, "memory": tmp_path})
    with pytest.raises(CgroupReadError, match=r"nowhere/cpu\.stat"):
        read_sample(paths, at=0.0)


def test_v1_mounts_are_found_apart_or_together() -> None:
    apart = (
        "30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "31 25 0:27 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
        "33 25 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "40 25 0:35 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    )
    assert v1_mounts(apart)["cpuacct"] == Path("/sys/fs/cgroup/cpuacct")
    together = "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    mounts = v1_mounts(together)
    assert mounts["cpu"] == mounts["cpuacct"] == Path("/sys/fs/cgroup/cpu,cpuacct")
    with pytest.raises(CgroupReadError, match="'memory' controller is not mounted"):
        v1_paths("x", mounts)


def test_v2_files_are_read(tmp_path: Path) -> None:
    (tmp_path / "cpu.stat").write_text(
        "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"
        "nr_periods 40\nnr_throttled 10\nthrottled_usec 90000\n"
    )
    (tmp_path / "cpu.max").write_text("50000 100000\n")
    (tmp_path / "memory.current").write_text(str(100 * MIB))
    (tmp_path / "memory.stat").write_text(f"anon {80 * MIB}\ninactive_file {30 * MIB}\n")
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    (tmp_path / "memory.max").write_text("max\n")
    paths = CgroupPaths(2, tmp_path, tmp_path)
    sample = read_sample(paths, at=5.0)
    assert sample.cpu_seconds == 2.5
    assert sample.working_set_bytes == 70 * MIB
    assert (sample.periods, sample.throttled, sample.oom_kills) == (40, 10, 1)
    limits = read_limits(paths)
    assert (limits.cpu_cores, limits.memory_bytes) == (0.5, None)
