"""The streams probe: hold N idle SSE streams open so memory per stream can be read.

The runner divides the target's memory growth by the streams held. Streams
open in batches (a burst of thousands of SYNs would overflow the listen
backlog and measure that instead), and stay open until the trial ends.
WebSocket streams are not built: asking for them fails the trial with a clear
message rather than silently holding SSE instead.
"""

from __future__ import annotations

import asyncio
import time

from plimsoll.api.workload import StreamKind, StreamsProbe
from plimsoll_generator.client import build_request
from plimsoll_generator.context import TrialContext
from plimsoll_generator.sse import HeldStream, StreamWatch

BATCH = 200
BATCH_PAUSE = 0.02


class StreamsProbeDriver:
    def __init__(self, ctx: TrialContext, probe: StreamsProbe) -> None:
        if probe.kind is not StreamKind.SSE:
            raise ValueError(
                f"streams kind {probe.kind.value!r}: WebSocket streams are not built in this "
                "generator yet; use kind 'sse'"
            )
        self.ctx = ctx
        self.probe = probe
        headers = {"Accept": "text/event-stream"}
        self.payload = build_request("GET", ctx.path(probe.path), ctx.host_header, headers)
        keep_alive = (
            ctx.request.workload.users.keep_alive_timeout if ctx.request.workload.users else 45.0
        )
        self.watch = StreamWatch(
            ctx.streams, keep_alive, lambda: ctx.measuring(time.perf_counter())
        )
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.watch.start()
        self.task = asyncio.get_running_loop().create_task(self._open_all())

    async def _open_all(self) -> None:
        for first in range(0, self.probe.count, BATCH):
            for _ in range(first, min(first + BATCH, self.probe.count)):
                self.ctx.pool.send(self.payload, HeldStream(self.watch), fresh=True)
            await asyncio.sleep(BATCH_PAUSE)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.watch.stop()
