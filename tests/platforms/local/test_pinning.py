"""Pinning with real cgroups: limits written, processes charged, everything removed; and the
loud fallback where cgroups cannot be written."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest

from plimsoll.platforms.local import pinning as cgroups
from plimsoll.platforms.local.processes import ManagedProcess


def _hierarchy() -> cgroups.Hierarchy:
    try:
        hierarchy = cgroups.discover()
    except cgroups.CgroupsUnavailableError as exc:
        pytest.fail(f"this machine should have cgroups: {exc}")
    if os.geteuid() != 0:
        pytest.fail("these tests run as root, as the platform does")
    return hierarchy


async def test_group_has_the_limits_and_holds_the_process(tmp_path: Path) -> None:
    hierarchy = _hierarchy()
    run = f"test-{uuid.uuid4().hex[:6]}"
    group = cgroups.create_group(hierarchy, run, "target", 0.5, 64 * 2**20)
    try:
        if group.version == 1:
            assert (group.cpu_dir / "cpu.cfs_quota_us").read_text().strip() == "50000"
            assert int((group.memory_dir / "memory.limit_in_bytes").read_text()) == 64 * 2**20
        else:
            assert (group.cpu_dir / "cpu.max").read_text().split() == ["50000", "100000"]
        process = ManagedProcess(
            "sleeper",
            ["sleep", "30"],
            dict(os.environ),
            tmp_path / "s.log",
            cgroup_procs=group.procs_files,
        )
        await process.start()
        await asyncio.sleep(0.2)
        for procs in group.procs_files:
            assert str(process.pid) in procs.read_text().split()
        await process.stop()
    finally:
        problems = cgroups.remove_group(group)
    assert problems == []
    assert not group.memory_dir.exists()
    assert not group.memory_dir.parent.exists()  # the run's directory went too


def test_unwritable_root_says_why(tmp_path: Path) -> None:
    root = tmp_path / "nowhere"  # nothing mounted here: mkdir of cpu/plimsoll fails
    hierarchy = cgroups.discover(root)
    with pytest.raises(cgroups.CgroupsUnavailableError, match="cannot create"):
        cgroups.create_group(hierarchy, "run", "target", 1.0, 2**30)
    assert not (root / "cpu").exists()
