"""The generator's own CPU use: total over the measured window and its busiest stretch.

`trial.py` starts a `CpuMeter` when the measured window opens. A generator above
~85% of its core may itself be the bottleneck; the runner judges that from
`cpu_seconds` and `peak_cpu_fraction` (the busiest WINDOW seconds of this process).
It also reads how long this process's threads were runnable but waiting for a
CPU (the kernel's schedstat run delay): a generator that waits is on a busy
host, and its late starts are the host's doing, not the target's. And it reads
the share of the host's CPU time its hypervisor took (steal, /proc/stat): on a
virtual machine that time passes for every process on it without any of them
running, and no run-queue figure shows it.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

WINDOW = 5.0
_SAMPLE = 1.0


def run_delay(pid: int | str = "self") -> tuple[float, int] | None:
    """Cumulative run-queue wait (seconds) of a process's live threads and how many times
    they were scheduled (/proc/PID/task/*/schedstat: run time, wait, timeslices), or None
    where the kernel does not expose it."""
    waited = 0
    slices = 0
    found = False
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue  # the thread ended between the listing and the read
        if len(fields) >= 3 and fields[1].isdigit() and fields[2].isdigit():
            waited += int(fields[1])
            slices += int(fields[2])
            found = True
    return (waited / 1e9, slices) if found else None


def host_cpu_ticks() -> tuple[int, int] | None:
    """The host's stolen and total CPU ticks since boot (/proc/stat's first line: user,
    nice, system, idle, iowait, irq, softirq, steal, ...; guest time is already inside
    user), or None where the kernel does not expose them."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu" or not all(f.isdigit() for f in fields[1:9]):
        return None
    ticks = [int(f) for f in fields[1:9]]
    return ticks[7], sum(ticks)


class CpuMeter:
    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []  # (wall, cpu)
        self._task: asyncio.Task[None] | None = None
        self._wait: list[tuple[float, int] | None] = []
        self._host: list[tuple[int, int] | None] = []

    def start(self) -> None:
        self.samples = [(time.perf_counter(), time.process_time())]
        self._wait = [run_delay(os.getpid())]
        self._host = [host_cpu_ticks()]
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(_SAMPLE)
            self.samples.append((time.perf_counter(), time.process_time()))

    async def stop(self) -> None:
        if self._task is not None:
            # As plimsoll.metrics.tasks.cancel_and_wait (an import the image contract
            # forbids): the caller's own cancellation must not be swallowed with the task's.
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
        if self.samples:
            self.samples.append((time.perf_counter(), time.process_time()))
            self._wait.append(run_delay(os.getpid()))
            self._host.append(host_cpu_ticks())

    @property
    def wait(self) -> tuple[float, int] | None:
        """Seconds this process's threads waited for a CPU in the window, and how many times
        they were scheduled (None: unreadable): the mean wait per scheduling is the delay
        every wake-up met, answers read late included."""
        if len(self._wait) < 2 or self._wait[0] is None or self._wait[-1] is None:
            return None
        (wait0, slices0), (wait1, slices1) = self._wait[0], self._wait[-1]
        return max(wait1 - wait0, 0.0), max(slices1 - slices0, 0)

    @property
    def steal_share(self) -> float | None:
        """The share of the host's CPU time in the window that its hypervisor took (None:
        unreadable, or too short a window for a tick to pass)."""
        if len(self._host) < 2 or self._host[0] is None or self._host[-1] is None:
            return None
        (steal0, total0), (steal1, total1) = self._host[0], self._host[-1]
        if total1 <= total0:
            return None
        return max(steal1 - steal0, 0) / (total1 - total0)

    @property
    def cpu_seconds(self) -> float:
        if len(self.samples) < 2:
            return 0.0
        return self.samples[-1][1] - self.samples[0][1]

    @property
    def peak_fraction(self) -> float:
        """The highest CPU share over any WINDOW-long stretch (the whole run if shorter)."""
        return peak_fraction(self.samples, WINDOW)


def peak_fraction(samples: list[tuple[float, float]], window: float) -> float:
    """Max CPU share over stretches of at least `window` seconds of (wall, cpu) samples."""
    if len(samples) < 2:
        return 0.0
    total_wall = samples[-1][0] - samples[0][0]
    if total_wall <= 0:
        return 0.0
    if total_wall < window:
        return (samples[-1][1] - samples[0][1]) / total_wall
    best = 0.0
    start = 0
    for end in range(1, len(samples)):
        while samples[end][0] - samples[start + 1][0] >= window:
            start += 1
        wall = samples[end][0] - samples[start][0]
        if wall >= window:
            best = max(best, (samples[end][1] - samples[start][1]) / wall)
    return best
