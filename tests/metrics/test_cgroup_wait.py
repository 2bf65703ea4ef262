"""The target's CPU wait outside its own throttling, from cgroup files and schedstat.

Fixtures stand in for the kernel's files so both hierarchies are tested on any
machine: cgroup v1 (the per-thread schedstat wait, this project's VM), cgroup v2
with `cpu.pressure` (wall time) and v2 without it (schedstat again). In each, a
four-threaded group throttled for 0.3 s of a 1 s window, each thread waiting
through all of it and 50 ms more, must read as 0.2 s of wait outside throttling
(4 × 50 ms), where the old arithmetic read 4 × 0.35 s - 0.3 s = 1.1 s.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from plimsoll.metrics.cgroup import CgroupPaths, read_sample
from plimsoll.metrics.samples import Limits, Sample, summarise
from plimsoll.metrics.schedstat import WaitOutsideThrottling
from plimsoll.metrics.source import Window

MIB = 1 << 20
PID = 4242
THREADS = (4242, 4243, 4244, 4245)
LIMITS = Limits(cpu_cores=0.5, cfs_period_ms=100.0, memory_bytes=256 * MIB)
WINDOW = Window(datetime.fromtimestamp(0.0, UTC), datetime.fromtimestamp(1.0, UTC))


def threads(proc: Path, wait_ns: int) -> None:
    for tid in THREADS:
        task = proc / str(PID) / "task" / str(tid)
        task.mkdir(parents=True, exist_ok=True)
        (task / "schedstat").write_text(f"123456 {wait_ns} 77\n")


def v1_group(root: Path, usage_ns: int, throttled_ns: int, periods: int, hit: int) -> CgroupPaths:
    cpu, memory = root / "cpu", root / "memory"
    for folder in (cpu, memory):
        folder.mkdir(parents=True, exist_ok=True)
    (cpu / "cgroup.procs").write_text(f"{PID}\n")
    (cpu / "cpu.stat").write_text(
        f"nr_periods {periods}\nnr_throttled {hit}\nthrottled_time {throttled_ns}\n"
    )
    (cpu / "cpuacct.usage").write_text(str(usage_ns))
    (memory / "memory.usage_in_bytes").write_text(str(40 * MIB))
    (memory / "memory.stat").write_text("total_inactive_file 0\n")
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    return CgroupPaths(1, cpu, memory)


def v2_group(root: Path, usage_us: int, throttled_us: int, pressure_us: int | None) -> CgroupPaths:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cgroup.procs").write_text(f"{PID}\n")
    (root / "cpu.stat").write_text(
        f"usage_usec {usage_us}\nnr_periods 10\nnr_throttled 3\nthrottled_usec {throttled_us}\n"
    )
    if pressure_us is not None:
        (root / "cpu.pressure").write_text(
            f"some avg10=0 avg60=0 avg300=0 total={pressure_us}\n"
            "full avg10=0 avg60=0 avg300=0 total=0\n"
        )
    (root / "memory.current").write_text(str(40 * MIB))
    (root / "memory.stat").write_text("inactive_file 0\n")
    (root / "memory.events").write_text("oom_kill 0\n")
    return CgroupPaths(2, root, root)


def wait_cores(first: Sample, last: Sample) -> float | None:
    usage = summarise([first, last], WINDOW, interval=1.0, source="cgroup", limits=LIMITS)
    return usage.cpu_wait_cores


def test_v1_takes_the_throttled_time_from_each_thread(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    waits = WaitOutsideThrottling(proc)
    threads(proc, 0)
    first = read_sample(v1_group(tmp_path, 0, 0, 0, 0), at=0.0, waits=waits)
    threads(proc, 350_000_000)
    last = read_sample(v1_group(tmp_path, 500_000_000, 300_000_000, 10, 3), at=1.0, waits=waits)
    assert last.cpu_wait_source == "schedstat"
    assert wait_cores(first, last) == pytest.approx(0.2)


def test_v2_without_pressure_takes_the_throttled_time_from_each_thread(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    waits = WaitOutsideThrottling(proc)
    threads(proc, 0)
    first = read_sample(v2_group(tmp_path / "g", 0, 0, None), at=0.0, waits=waits)
    threads(proc, 350_000_000)
    last = read_sample(v2_group(tmp_path / "g", 500_000, 300_000, None), at=1.0, waits=waits)
    assert last.cpu_wait_source == "schedstat"
    assert wait_cores(first, last) == pytest.approx(0.2)


def test_v2_pressure_is_wall_time_so_the_throttled_time_comes_off_once(tmp_path: Path) -> None:
    # Some thread waited for 0.35 s of the second: 0.3 s throttled, 0.05 s the host's.
    group = tmp_path / "g"
    first = read_sample(v2_group(group, 0, 0, 0), at=0.0)
    last = read_sample(v2_group(group, 500_000, 300_000, 350_000), at=1.0)
    assert last.cpu_wait_source == "cpu.pressure"
    assert wait_cores(first, last) == pytest.approx(0.05)


def test_a_one_off_schedstat_reading_has_no_wait_rather_than_a_wrong_one(tmp_path: Path) -> None:
    threads(tmp_path / "proc", 5)
    sample = read_sample(v1_group(tmp_path, 0, 0, 0, 0), at=0.0)
    assert (sample.cpu_wait_seconds, sample.cpu_wait_source) == (None, None)
