"""A real HTTP/1.1 server on 127.0.0.1 that misbehaves on cue, for the client's retries.

Each request takes the next answer from `script` (then `then` for every request
after): an HTTP status with an optional Retry-After, a reset (the connection is
closed with no answer), or a hang (no answer until the client gives up). It also
serves discovery and checks a bearer token, which a test may change mid-run.
Every request is logged as (method, path, Authorization), so a test sees what
reached the server, not what the client meant to send.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Answer:
    status: int = 200
    retry_after: str | None = None
    reset: bool = False
    hang: bool = False
    body: dict[str, object] | None = None


OK = Answer()
RESET = Answer(reset=True)
HANG = Answer(hang=True)


@dataclass
class FlakyServer:
    script: list[Answer] = field(default_factory=list)
    then: Answer = OK
    token: str | None = None  # when set, any other bearer token gets 401
    seen: list[tuple[str, str, str | None]] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)  # what each request sent
    port: int = 0
    _server: asyncio.Server | None = None
    _open: set[asyncio.StreamWriter] = field(default_factory=set)
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and drop open connections: the next connect is refused."""
        if self._server is not None:
            self._server.close()
            self._stopping.set()
            for writer in list(self._open):
                writer.transport.abort()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._open.discard(writer)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)
        }
        self.bodies.append(await reader.readexactly(int(headers.get("content-length", "0"))))
        auth = headers.get("authorization")
        self.seen.append((method, path, auth))
        answer = self.script.pop(0) if self.script else self.then
        if answer.reset:
            writer.transport.abort()
            return False
        if answer.hang:
            await self._stopping.wait()  # until the test stops the server
            return False
        status, body = answer.status, answer.body or {}
        if status < 400 and self.token is not None and auth != f"Bearer {self.token}":
            status, body = 401, {"message": "Unauthorized"}
        if status < 400 and not body and path.startswith("/apis/") and path.count("/") == 3:
            body = {"resources": [{"name": "capacitytests"}, {"name": "capacitytests/status"}]}
        if status >= 400 and not body:
            body = {"message": f"scripted {status}"}
        payload = json.dumps(body or {"path": path}).encode()
        extra = f"Retry-After: {answer.retry_after}\r\n" if answer.retry_after else ""
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        await writer.drain()
        return True
