"""A tiny target for the operator tests: `GET /work` calls the mock once and burns a little CPU.

Started by the fake kubelet (`tests/controller/kubelet.py`) from the target pod's
command. It binds the pod's IP (POD_IP, injected by the operator through the
downward API) on PORT, and reaches the mock at UPSTREAM_URL, which the kubelet
resolved from the Service name the operator injected. Standard library only.
"""

from __future__ import annotations

import asyncio
import os
import time
import urllib.parse

UPSTREAM = urllib.parse.urlsplit(os.environ["UPSTREAM_URL"])
WORK_SECONDS = float(os.environ.get("WORK_MS", "2")) / 1000


async def call_upstream() -> bool:
    reader, writer = await asyncio.open_connection(UPSTREAM.hostname, UPSTREAM.port)
    try:
        writer.write(
            f"GET /work HTTP/1.1\r\nHost: {UPSTREAM.netloc}\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        status = await reader.readline()
        await reader.read()
        return b" 200 " in status
    finally:
        writer.close()


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1]
            if path.startswith(b"/work"):
                end = time.thread_time() + WORK_SECONDS
                while time.thread_time() < end:
                    pass
                ok = await call_upstream()
                body = b'{"ok":true}' if ok else b'{"ok":false}'
                status = b"200 OK" if ok else b"502 Bad Gateway"
            else:
                status, body = b"200 OK", b'{"ok":true}'
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: " + str(len(body)).encode())
            writer.write(b"\r\nContent-Type: application/json\r\n\r\n" + body)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(handle, os.environ["POD_IP"], int(os.environ["PORT"]))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
