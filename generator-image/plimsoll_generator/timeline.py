"""Cutting one worker process's measured window into timeline slices.

Started by `trial.py` beside the workload drivers: at every slice boundary
(measure start + k × `request.slice_seconds`) it folds the recorder's buffered
latencies, takes the slice's shared histogram and the counts that changed since
the last cut, and starts the next slice. Calls are attributed to the slice in
which they completed (their latency is known then), and starts to the slice in
which they were sent. The runner merges the processes' slices exactly
(`plimsoll.shared.timeline`). Each slice is also handed to `on_cut` as it is cut, so
the control API can answer a poll mid-trial with the slices so far (`workers.py`):
the live view's figures, without a second recording.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from plimsoll.api.timeline import MAX_SLICES, TimelineSlice
from plimsoll.shared import histogram
from plimsoll.shared.timeline import bounded
from plimsoll_generator.context import TrialContext
from plimsoll_generator.spread import SpreadPool

# Slices kept before neighbours merge: twice the step's bound, so the merge runs rarely.
_KEEP = 2 * MAX_SLICES


class TimelineCutter:
    def __init__(
        self, ctx: TrialContext, on_cut: Callable[[TimelineSlice], None] | None = None
    ) -> None:
        self.ctx = ctx
        self.on_cut = on_cut
        self.width = ctx.request.slice_seconds
        self.slices: list[TimelineSlice] = []
        self.next_start = 0.0  # seconds from the measure start of the open slice
        self._sent = 0
        self._ok = 0
        self._errors = 0
        self._replica_sent: list[int] = []

    def _replica_counts(self) -> list[int]:
        """Requests routed to each replica since the last cut (none with one replica)."""
        pool = self.ctx.pool
        if not isinstance(pool, SpreadPool):
            return []
        now = list(pool.sent)
        before = self._replica_sent or [0] * len(now)
        self._replica_sent = now
        return [n - b for n, b in zip(now, before, strict=True)]

    def cut(self, seconds: float) -> None:
        """Close the open slice, `seconds` wide, and open the next one."""
        ctx = self.ctx
        recorder = ctx.recorder
        recorder.fold()
        shared = recorder.slice_latency
        latency = histogram.encode(shared) if histogram.count(shared) else None
        histogram.clear(shared)
        ok, errors = recorder.totals()
        cut = TimelineSlice(
            start=self.next_start,
            seconds=seconds,
            latency=latency,
            sent=ctx.sent - self._sent,
            ok=ok - self._ok,
            errors=errors - self._errors,
            replica_sent=self._replica_counts(),
        )
        self.slices.append(cut)
        if self.on_cut is not None:
            self.on_cut(cut)
        self._sent, self._ok, self._errors = ctx.sent, ok, errors
        self.next_start += seconds
        if len(self.slices) > _KEEP:
            self.slices = bounded(self.slices, MAX_SLICES)

    async def run(self) -> None:
        """Cut at each boundary inside the measured window; cancelled at the trial's end."""
        ctx = self.ctx
        index = 1
        while True:
            boundary = ctx.measure_from + index * self.width
            if boundary >= ctx.end:
                return
            delay = boundary - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            self.cut(self.width)
            index += 1

    def finish(self, measured: float) -> list[TimelineSlice]:
        """Close the last slice (to the end of the measured window, which took the calls
        still in flight at the end too) and return the timeline."""
        rest = measured - self.next_start
        ok, errors = self.ctx.recorder.totals()
        changed = (self.ctx.sent, ok, errors) != (self._sent, self._ok, self._errors)
        if rest > 1e-6 or changed:
            self.cut(max(rest, 1e-3))
        return self.slices
