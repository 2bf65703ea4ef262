"""How long a process group waited for a CPU: the target's share of host contention.

A thread that is runnable but not running waits in a run queue; the kernel adds
that time up per thread (`/proc/PID/task/TID/schedstat`, the second field, in
nanoseconds) and, on cgroup v2 with pressure stall information, per group
(`cpu.pressure`, the `some` line's `total`, microseconds of wall time with at
least one task waiting). A quota-throttled group waits too, but that wait is the
pod's own shape at work, so the samplers keep the group's throttled time beside
it (`cpu.stat`: v1 `throttled_time` ns, v2 `throttled_usec`) and the window's
figure is the wait outside throttling (`samples.summarise`). What is left is
the host's doing: another process held the CPU the target could have used.

Read by `cgroup.read_sample` (pinned target) and `proc.ProcGroupReader`
(unpinned processes). Every reader returns None where the kernel offers nothing,
never a zero.
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


def group_run_delay_seconds(pids: list[int], proc: Path = Path("/proc")) -> float | None:
    """The summed run-queue wait of every thread of `pids` (None: none could be read)."""
    delays = [thread_run_delay_ns(pid, proc) for pid in pids]
    known = [d for d in delays if d is not None]
    return sum(known) / 1e9 if known else None


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
