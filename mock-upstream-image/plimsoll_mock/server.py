"""Running the mock: listen, serve until SIGTERM, then shut down gracefully.

`__main__` calls `serve`; tests call `start` to run the server in-process on an
ephemeral port. Shutdown stops accepting, closes idle keep-alive connections,
ends held SSE streams, lets held calls finish, and cuts whatever is still open
at the grace deadline.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import resource
import signal
import ssl
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from plimsoll.api.upstream import Upstream
from plimsoll_mock import floor
from plimsoll_mock.connection import Connection
from plimsoll_mock.routes import Router
from plimsoll_mock.state import State

TLS_CERT_ENV = "TLS_CERT_FILE"
TLS_KEY_ENV = "TLS_KEY_FILE"
DEFAULT_KEEP_ALIVE = 15.0


@dataclass
class Running:
    """A started server: its port, its counters, and how to stop it."""

    server: asyncio.Server
    state: State
    port: int
    ticker: asyncio.TimerHandle | None = None

    async def shutdown(self, grace: float) -> None:
        state = self.state
        state.shutting_down = True
        self.server.close()
        if self.ticker is not None:
            self.ticker.cancel()
        for conn in list(state.connections):
            conn.end_held() if conn.streaming else conn.close_if_idle()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        # A plain counter, decremented on the hot path: polling it costs nothing there,
        # where an Event would cost every response a check.
        while state.in_flight > 0 and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        for conn in list(state.connections):
            conn.abort()
        await asyncio.sleep(0)  # let the transports run their connection_lost callbacks


def tls_context(environ: Mapping[str, str]) -> ssl.SSLContext | None:
    cert, key = environ.get(TLS_CERT_ENV), environ.get(TLS_KEY_ENV)
    if not cert and not key:
        return None
    if not cert or not key:
        raise ValueError(f"TLS needs both {TLS_CERT_ENV} and {TLS_KEY_ENV}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def raise_fd_limit() -> None:
    # Ten thousand held calls need ten thousand descriptors; the soft limit is often 1024.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def start(
    config: Upstream,
    host: str,
    port: int,
    *,
    tls: ssl.SSLContext | None = None,
    seed: int | None = None,
) -> Running:
    loop = asyncio.get_running_loop()
    state = State(config.max_in_flight)
    router = Router(config, state, random.Random(seed))
    server = await loop.create_server(
        lambda: Connection(state, router.dispatch, loop, router.prepared),
        host,
        port,
        ssl=tls,
        backlog=4096,
        reuse_address=True,
    )
    bound = server.sockets[0].getsockname()[1]
    running = Running(server, state, bound)
    interval = config.mcp.keep_alive if config.mcp is not None else DEFAULT_KEEP_ALIVE

    def tick() -> None:
        state.tick_keep_alives()
        running.ticker = loop.call_later(interval, tick)

    if interval > 0:
        running.ticker = loop.call_later(interval, tick)
    return running


async def serve(
    config: Upstream,
    host: str,
    port: int,
    *,
    grace: float,
    seed: int | None = None,
    floor_port: int | None = None,
) -> None:
    raise_fd_limit()
    tls = tls_context(os.environ)
    # Started first, so the mock answering /healthz means the floor answers too.
    floor_process = (
        await asyncio.to_thread(floor.spawn, host, floor_port) if floor_port is not None else None
    )
    try:
        await _serve(config, host, port, tls, grace=grace, seed=seed)
    finally:
        if floor_process is not None:
            floor.stop(floor_process)


async def _serve(
    config: Upstream,
    host: str,
    port: int,
    tls: ssl.SSLContext | None,
    *,
    grace: float,
    seed: int | None,
) -> None:
    running = await start(config, host, port, tls=tls, seed=seed)
    # Start-up objects live for the whole run: keep the collector from rescanning them.
    gc.collect()
    gc.freeze()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    scheme = "https" if tls else "http"
    print(
        f"plimsoll-mock listening on {scheme}://{host}:{running.port}", file=sys.stderr, flush=True
    )
    await stop.wait()
    print("plimsoll-mock shutting down", file=sys.stderr, flush=True)
    await running.shutdown(grace)
