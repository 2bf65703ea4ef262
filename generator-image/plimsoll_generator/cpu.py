"""The generator's own CPU use: total over the measured window and its busiest stretch.

`trial.py` starts a `CpuMeter` when the measured window opens. A generator above
~85% of its core may itself be the bottleneck; the runner judges that from
`cpu_seconds` and `peak_cpu_fraction` (the busiest WINDOW seconds of this process).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

WINDOW = 5.0
_SAMPLE = 1.0


class CpuMeter:
    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []  # (wall, cpu)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.samples = [(time.perf_counter(), time.process_time())]
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(_SAMPLE)
            self.samples.append((time.perf_counter(), time.process_time()))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.samples:
            self.samples.append((time.perf_counter(), time.process_time()))

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
