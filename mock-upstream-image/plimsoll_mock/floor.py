"""The direct-call floor's own endpoint: a tiny responder in a process of its own.

The generators probe the floor beside every trial to tell a stalled host from a
slow target (`plimsoll_generator.floor`). Probing the mock's own port measured
the mock's event loop as well: under heavy load (160 LLM users streaming tokens)
the loop runs callbacks for tens of milliseconds between reads, so the floor rose
with the mock's work and a quiet host was called busy. This process shares no
loop, no GIL and no queue with the mock, so its latency is the host's: the time
to schedule a waking process and cross loopback.

`server.serve` starts it with `spawn` when the mock is given `--floor-port`
(the local platform and the Kubernetes mock pod both do). It answers every
request with 200 "ok", keeps connections alive, and exits when its standard
input closes, so it never outlives the mock however the mock ends. Run alone:
`python -m plimsoll_mock.floor --host H --port P`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n"
END_OF_HEAD = b"\r\n\r\n"
MAX_PENDING = 64 * 1024  # a probe is a bodiless GET: anything longer is not one
READY = "plimsoll-mock floor listening"


class FloorProtocol(asyncio.Protocol):
    """Answers each complete request head with the same response, in order."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.pending = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.pending += data
        heads = self.pending.count(END_OF_HEAD)
        if heads:
            self.pending = self.pending.rsplit(END_OF_HEAD, 1)[1]
            self.transport.write(RESPONSE * heads)
        if len(self.pending) > MAX_PENDING:
            self.transport.close()


async def serve(host: str, port: int) -> None:
    """Listen on host:port until standard input closes (the mock ended)."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(FloorProtocol, host, port, reuse_address=True)
    bound = server.sockets[0].getsockname()[1]
    ended = asyncio.Event()

    def stdin_readable() -> None:
        if not os.read(0, 4096):
            ended.set()

    loop.add_reader(0, stdin_readable)
    print(f"{READY} on {host}:{bound}", flush=True)
    await ended.wait()
    server.close()


def spawn(host: str, port: int) -> subprocess.Popen[str]:
    """Start the floor process and wait until it listens; raise OSError if it cannot."""
    process = subprocess.Popen(
        [sys.executable, "-m", "plimsoll_mock.floor", "--host", host, "--port", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    try:
        line = process.stdout.readline()  # blocks only at start-up, before the mock serves
        if not line.startswith(READY):
            raise OSError(f"the floor process on {host}:{port} did not start ({line.strip()!r})")
    except BaseException:
        process.kill()
        process.wait(timeout=5.0)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()
        raise
    return process


def stop(process: subprocess.Popen[str], *, within: float = 5.0) -> None:
    """End the floor process: closing its input is its signal to exit."""
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(timeout=within)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=within)
    if process.stdout is not None:
        process.stdout.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plimsoll_mock.floor")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args.host, args.port))
    except OSError as exc:  # the port is taken
        print(f"plimsoll-mock floor: cannot start: {exc}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
