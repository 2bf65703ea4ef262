"""Opens and holds many idle client connections for bench/mock.py's memory step.

Each connection sends one request (a slow call, or an SSE stream request) and
then only keeps its socket open; nothing is read beyond what the kernel buffers.
Closing uses SO_LINGER 0 (a reset), so ten thousand closes leave no TIME_WAIT
sockets to exhaust the loopback's ephemeral ports for the next step.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any


class Idle(asyncio.Protocol):
    def __init__(self, request: bytes) -> None:
        self.request = request
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        pass  # keep-alives and heads are ignored: the point is to stay connected


async def hold(port: int, request: bytes, count: int, batch: int = 250) -> list[Idle]:
    loop = asyncio.get_running_loop()
    held: list[Idle] = []
    for i in range(0, count, batch):
        pairs = await asyncio.gather(
            *(
                loop.create_connection(lambda: Idle(request), "127.0.0.1", port)
                for _ in range(min(batch, count - i))
            )
        )
        held += [protocol for _, protocol in pairs]
    return held


def release(held: list[Idle]) -> None:
    linger = struct.pack("ii", 1, 0)
    for idle in held:
        sock = idle.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        idle.transport.abort()
