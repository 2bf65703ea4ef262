"""The run-queue wait readers against this machine's /proc and a cgroup v2 pressure file."""

from __future__ import annotations

import os
import time
from pathlib import Path

from plimsoll.metrics.schedstat import (
    cgroup_pids,
    group_run_delay_seconds,
    pressure_some_seconds,
    thread_run_delay_ns,
)


def test_a_live_process_has_a_run_delay_that_does_not_shrink_while_its_threads_live() -> None:
    first = thread_run_delay_ns(os.getpid())
    assert first is not None
    spin_until = time.monotonic() + 0.1
    while time.monotonic() < spin_until:  # run a little, so the scheduler accounts for us
        pass
    second = thread_run_delay_ns(os.getpid())
    assert second is not None
    assert second >= first


def test_a_gone_process_reads_none_never_zero() -> None:
    assert thread_run_delay_ns(2**22 + 7) is None
    assert group_run_delay_seconds([2**22 + 7]) is None


def test_cpu_pressure_some_total_is_read_in_seconds(tmp_path: Path) -> None:
    pressure = tmp_path / "cpu.pressure"
    pressure.write_text(
        "some avg10=1.00 avg60=0.50 avg300=0.10 total=2500000\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
    assert pressure_some_seconds(pressure) == 2.5
    assert pressure_some_seconds(tmp_path / "absent") is None


def test_cgroup_pids_reads_a_procs_file(tmp_path: Path) -> None:
    procs = tmp_path / "cgroup.procs"
    procs.write_text("12\n34\n")
    assert cgroup_pids(procs) == [12, 34]
    assert cgroup_pids(tmp_path / "absent") == []
