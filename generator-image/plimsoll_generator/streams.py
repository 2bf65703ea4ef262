"""The streams probe: hold N idle streams open so memory per stream can be read.

The runner divides the target's memory growth by the streams held. Kind `sse`
holds event streams (a GET on the probe's path), `websocket` holds WebSockets
(`websocket.py`, an Upgrade on `wsPath`, or on `path`), and `mixed` holds half of each,
(SSE first on even indices, so any split stays even).
Streams open in batches (a burst of thousands of SYNs would overflow the
listen backlog and measure that instead), and stay open until the trial ends.
"""

from __future__ import annotations

import asyncio
import time

from plimsoll.api.workload import StreamKind, StreamsProbe
from plimsoll_generator.client import build_request
from plimsoll_generator.context import TrialContext
from plimsoll_generator.sse import HeldStream, StreamWatch
from plimsoll_generator.websocket import WsStream, open_ws

BATCH = 200
BATCH_PAUSE = 0.02


def is_websocket(kind: StreamKind, index: int) -> bool:
    """Whether stream `index` of the probe is a WebSocket."""
    if kind is StreamKind.MIXED:
        return index % 2 == 1
    return kind is StreamKind.WEBSOCKET


class StreamsProbeDriver:
    def __init__(self, ctx: TrialContext, probe: StreamsProbe) -> None:
        self.ctx = ctx
        ctx.one_pool()  # refuses several replicas when the trial is built, not mid-run
        self.probe = probe
        self.ws_path = ctx.path(probe.ws_path or probe.path)
        headers = {"Accept": "text/event-stream"}
        self.payload = build_request("GET", ctx.path(probe.path), ctx.host_header, headers)
        keep_alive = (
            ctx.request.workload.users.keep_alive_timeout if ctx.request.workload.users else 45.0
        )
        self.watch = StreamWatch(
            ctx.streams, keep_alive, lambda: ctx.measuring(time.perf_counter())
        )
        self.websockets: list[WsStream] = []
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.watch.start()
        self.task = asyncio.get_running_loop().create_task(self._open_all())

    async def _open_all(self) -> None:
        loop = asyncio.get_running_loop()
        pool = self.ctx.one_pool()
        timeout = min(self.ctx.request.workload.timeout, 30.0)
        connecting: set[asyncio.Task[None]] = set()
        try:
            for first in range(0, self.probe.count, BATCH):
                for index in range(first, min(first + BATCH, self.probe.count)):
                    if not is_websocket(self.probe.kind, index):
                        pool.send(self.payload, HeldStream(self.watch), fresh=True)
                        continue
                    stream = WsStream(self.watch, self.ctx.host_header, self.ws_path)
                    self.websockets.append(stream)
                    task = loop.create_task(
                        open_ws(loop, stream, pool.host, pool.port, pool.tls, timeout)
                    )
                    connecting.add(task)
                    task.add_done_callback(connecting.discard)
                await asyncio.sleep(BATCH_PAUSE)
            if connecting:
                await asyncio.wait(connecting)
        finally:
            for task in connecting:
                task.cancel()

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.watch.stop()
        pool = self.ctx.one_pool()
        for stream in self.websockets:
            if stream.error is not None and not stream.cancelled:
                self.ctx.recorder.error(f"websocket {self.ws_path}: {stream.error}")
            stream.cancel()  # those still connecting; the live ones are closed already
            pool.bytes_in += stream.bytes_in
            pool.bytes_out += stream.bytes_out
        self.websockets.clear()
