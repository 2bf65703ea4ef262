"""The run-queue wait readers against this machine's /proc and a cgroup v2 pressure file."""

from __future__ import annotations

import os
import time
from pathlib import Path

from plimsoll.metrics.schedstat import (
    WaitOutsideThrottling,
    cgroup_pids,
    pressure_some_seconds,
    thread_run_delay_ns,
    thread_run_delays_ns,
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
    assert thread_run_delays_ns([2**22 + 7]) == {}


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


def test_every_live_thread_of_a_process_is_read_by_its_id() -> None:
    delays = thread_run_delays_ns([os.getpid()])
    assert os.getpid() in delays  # the main thread's id is the process id
    assert all(d >= 0 for d in delays.values())


MS = 1_000_000  # nanoseconds


def test_each_thread_waiting_through_the_throttled_time_is_not_counted_as_the_hosts() -> None:
    # Four threads of a 0.5-CPU group, each waiting 60 ms of a 100 ms interval in which
    # the group was throttled for 60 ms: every wait is the group's own throttling.
    # Summed and less the throttled time once, this read as 180 ms of the host's doing.
    waits = WaitOutsideThrottling()
    assert waits.add({1: 0, 2: 0, 3: 0, 4: 0}, throttled_ns=0) == 0.0
    after = waits.add({1: 60 * MS, 2: 60 * MS, 3: 60 * MS, 4: 60 * MS}, throttled_ns=60 * MS)
    assert after == 0.0
    # In the next interval nothing is throttled and one thread waits 30 ms for a CPU
    # another process held: that, and only that, counts.
    after = waits.add({1: 90 * MS, 2: 60 * MS, 3: 60 * MS, 4: 60 * MS}, throttled_ns=60 * MS)
    assert after == 0.03
    # A thread waiting longer than the throttled time in an interval keeps the excess.
    after = waits.add({1: 150 * MS, 2: 60 * MS, 3: 60 * MS, 4: 60 * MS}, throttled_ns=100 * MS)
    assert after == 0.05


def test_a_new_thread_counts_from_zero_and_no_thread_reads_none() -> None:
    waits = WaitOutsideThrottling()
    waits.add({1: 5 * MS}, throttled_ns=None)
    # Thread 1 counted its 5 ms at its first reading; thread 9, new, its 7 ms now.
    assert waits.add({1: 5 * MS, 9: 7 * MS}, throttled_ns=None) == 0.012
    assert waits.add({}, throttled_ns=None) is None
