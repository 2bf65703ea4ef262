"""CPU hogs pinned to one CPU: the busy host that the contention checks must notice.

Shared by `bench/truth.py` and the real contention test. Each hog is a Python
process spinning on one CPU (`os.sched_setaffinity`, real affinity) for at most
`seconds`, so even a hog whose parent died stops by itself; `cpu_hogs` kills
them on the way out. Used only beside a target pinned to the same CPU.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

_SPIN = (
    "import os, sys, time\n"
    "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
    "end = time.monotonic() + float(sys.argv[2])\n"
    "while time.monotonic() < end:\n"
    "    sum(range(1000))\n"
)


@contextlib.contextmanager
def cpu_hogs(cpu: int, count: int, seconds: float) -> Iterator[list[int]]:
    """`count` processes spinning on CPU `cpu` for at most `seconds`; their pids.

    Each starts a session of its own, as separate programs on a host do: with the
    scheduler's autogroups on, processes of one session share one group's weight,
    so hogs started from our session would count as one competitor however many
    there were (measured: eight left a cgroup'd target its whole 0.5 CPU quota)."""
    hogs = [
        subprocess.Popen(
            [sys.executable, "-c", _SPIN, str(cpu), str(seconds)],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        yield [hog.pid for hog in hogs]
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait(timeout=10)


def pinned(command: list[str], cpu: int) -> list[str]:
    """`command` started on CPU `cpu` only (taskset, util-linux): the target beside the hogs."""
    return ["taskset", "-c", str(cpu), *command]
