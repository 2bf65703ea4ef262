"""Streams held across trials: the `/streams` side of the control API.

The runner's streams probe asks a generator to hold N idle streams (`POST
/streams`), then more, reading the target's memory at each count; with
`workload.streams.holdDuringSteps` the streams then stay open through every
trial instead of being reopened by each one. They live in the control process's
own event loop, apart from the trial (which may run in worker processes), and are
opened by the same `StreamsProbeDriver` a trial uses, so they are the same
streams. Growing opens only the difference: closing and reopening would let the
target reuse what the closed streams freed, and hide their cost.
"""

from __future__ import annotations

from plimsoll.api.streams import StreamsHeld, StreamsHold
from plimsoll.api.trial import TrialRequest
from plimsoll_generator.context import TrialContext
from plimsoll_generator.recorder import Recorder
from plimsoll_generator.streams import StreamsProbeDriver
from plimsoll_generator.target_address import vetted_address

FOREVER = 86_400.0  # the context's "trial" length: a hold ends when released, not before


class HeldStreams:
    def __init__(self) -> None:
        self.ctx: TrialContext | None = None
        self.drivers: list[StreamsProbeDriver] = []
        self.requested = 0

    async def hold(self, request: StreamsHold) -> StreamsHeld:
        """Hold `request.count` streams. Raises ValueError without `workload.streams`, and
        `TargetRefusedError` (a ValueError) when the target's host resolves into a refused
        network: held streams go to the target like a trial's, so they pass its check."""
        probe = request.workload.streams
        if probe is None:
            raise ValueError("workload.streams is required: it says what streams to hold")
        if request.count < self.requested:
            self.release()
        if self.ctx is None:
            trial = TrialRequest(
                level=0,
                duration=FOREVER,
                workload=request.workload,
                target_url=request.target_url,
                refused_networks=request.refused_networks,
            )
            address = await vetted_address(trial)
            recorder = Recorder([op.name for op in trial.workload.mix])
            self.ctx = TrialContext.create(trial, recorder, address)
        extra = request.count - self.requested
        if extra > 0:
            driver = StreamsProbeDriver(self.ctx, probe.model_copy(update={"count": extra}))
            driver.start()
            self.drivers.append(driver)
        self.requested = request.count
        return self.status()

    def status(self) -> StreamsHeld:
        if self.ctx is None:
            return StreamsHeld()
        return StreamsHeld(
            requested=self.requested,
            open=sum(len(driver.watch.live) for driver in self.drivers),
            health=self.ctx.streams.model_copy(),
            errors=list(self.ctx.recorder.errors),
        )

    def release(self) -> StreamsHeld:
        """Close every held stream; the figures of what was held are returned."""
        last = self.status()
        for driver in self.drivers:
            driver.stop()
        if self.ctx is not None:
            self.ctx.pool.close()
        self.ctx, self.drivers, self.requested = None, [], 0
        return last
