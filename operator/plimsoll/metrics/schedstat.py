"""How long a process group waited for a CPU: the target's share of host contention.

A thread that is runnable but not running waits in a run queue; the kernel adds
that time up per thread (`/proc/PID/task/TID/schedstat`, the second field, in
nanoseconds) and, on cgroup v2 with pressure stall information, per group
(`cpu.pressure`, the `some` line's `total`, microseconds of wall time with at
least one task waiting). A quota-throttled group waits too, but that wait is the
pod's own shape at work, so the group's throttled time (`cpu.stat`: v1
`throttled_time` ns, v2 `throttled_usec`) is taken out of it. What is left is
the host's doing: another process held the CPU the target could have used.

The two waits add up differently, so throttling comes out differently:

- `cpu.pressure` is wall time, however many threads waited: the group's throttled
  time (wall time too) is subtracted once, over the window (`samples.summarise`);
- schedstat is per thread, and every runnable thread waits through each throttled
  period: a sum over N threads holds up to N times the throttled time. Subtracting
  it once left a multi-threaded target's own throttling reading as a busy host (a
  real LLM proxy at 0.5 CPU: "the host was busy" in 7 of 15 steps on an idle host).
  `WaitOutsideThrottling` takes it from each thread, sample by sample: a thread's
  wait beyond the group's throttled time in that interval. That is a lower bound of
  the wait outside throttling (a thread may have slept through part of a throttled
  interval), so the host is never blamed for more than it did.

Read by `cgroup.read_sample` (pinned target) and `proc.ProcGroupReader`
(unpinned processes: no quota, so nothing to take out). Every reader returns None
where the kernel offers nothing, never a zero.
"""

from __future__ import annotations

from pathlib import Path


def thread_run_delay_ns(pid: int, proc: Path = Path("/proc")) -> int | None:
    """Cumulative run-queue wait of the live threads of `pid`, or None (gone, no schedstat)."""
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return None
    total = 0
    found = False
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue  # the thread ended between the listing and the read
        if len(fields) >= 2 and fields[1].isdigit():
            total += int(fields[1])
            found = True
    return total if found else None


def thread_run_delays_ns(pids: list[int], proc: Path = Path("/proc")) -> dict[int, int]:
    """Cumulative run-queue wait of each live thread of `pids`, by thread id (empty: none)."""
    delays: dict[int, int] = {}
    for pid in pids:
        try:
            tasks = list((proc / str(pid) / "task").iterdir())
        except OSError:
            continue  # the process ended
        for task in tasks:
            try:
                fields = (task / "schedstat").read_text().split()
            except OSError:
                continue  # the thread ended between the listing and the read
            if len(fields) >= 2 and fields[1].isdigit() and task.name.isdigit():
                delays[int(task.name)] = int(fields[1])
    return delays


class WaitOutsideThrottling:
    """A cumulative counter of a group's thread wait outside its throttled time.

    Fed one reading per sample: each thread's cumulative run delay and the group's
    cumulative throttled time. Each interval adds, per thread, the growth of its wait
    less the growth of the throttled time (never below zero). A thread first seen
    counts from zero (it was born in the interval, or the group restarted), as a
    cgroup's counters would; the counter only grows, so `samples.summarise` treats it
    like any other."""

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self.proc = proc  # where the threads are read (a fixture in tests)
        self._last: dict[int, int] = {}
        self._throttled_ns: int | None = None
        self._seconds = 0.0

    def add(self, delays: dict[int, int], throttled_ns: int | None) -> float | None:
        """The counter after this reading, in seconds (None: no thread could be read)."""
        if not delays:
            return None
        throttled = 0
        if throttled_ns is not None:
            if self._throttled_ns is not None:
                throttled = max(throttled_ns - self._throttled_ns, 0)
            self._throttled_ns = throttled_ns
        outside = 0
        for tid, delay in delays.items():
            outside += max(delay - self._last.get(tid, 0) - throttled, 0)
        self._last = delays
        self._seconds += outside / 1e9
        return self._seconds


def pressure_some_seconds(pressure_file: Path) -> float | None:
    """`some total=` of a cgroup v2 `cpu.pressure` file, in seconds (None: absent)."""
    try:
        text = pressure_file.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("some "):
            for part in line.split():
                if part.startswith("total=") and part[6:].isdigit():
                    return int(part[6:]) / 1e6
    return None


def cgroup_pids(procs_file: Path) -> list[int]:
    try:
        return [int(line) for line in procs_file.read_text().split() if line.isdigit()]
    except OSError:
        return []
