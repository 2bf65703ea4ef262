"""What the control API reads before it knows who is asking: bounded, token first, and a
500 that tells the caller nothing. An in-process server on 127.0.0.1, raw sockets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from plimsoll.api.trial import CONTROL_TOKEN_HEADER, TrialResult
from plimsoll_generator import control
from plimsoll_generator.control import ControlProtocol, Trials
from plimsoll_generator.metrics import Metrics
from plimsoll_generator.workers import InProcess

TOKEN = "run-token"
SECRET = "/var/run/secrets/never-shown"


class _Failing(Trials):
    def get(self, trial_id: str) -> TrialResult | None:
        raise RuntimeError(f"cannot open {SECRET}")


@pytest.fixture
async def port() -> AsyncIterator[int]:
    trials = _Failing(InProcess(), Metrics(1))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: ControlProtocol(trials, TOKEN), "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()


async def exchange(port: int, head: bytes, body: bytes = b"") -> bytes:
    """Send `head` (and `body`), then read the answer; 5 s at most."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head + body)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(65536), 5)
    finally:
        writer.close()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


async def test_a_wrong_token_is_refused_before_the_body_is_sent(port: int) -> None:
    # A body of 100 MB is announced and never sent: the answer must not wait for it.
    head = (
        b"POST /trials HTTP/1.1\r\nHost: g\r\nContent-Length: 100000000\r\n"
        + f"{CONTROL_TOKEN_HEADER}: guess\r\n\r\n".encode()
    )
    answer = await exchange(port, head)
    assert status_of(answer) == 401
    assert b"Connection: close" in answer


async def test_a_body_over_the_cap_is_refused_unread(port: int) -> None:
    head = (
        f"POST /trials HTTP/1.1\r\nHost: g\r\n{CONTROL_TOKEN_HEADER}: {TOKEN}\r\n"
        f"Content-Length: {control.MAX_BODY_BYTES + 1}\r\n\r\n"
    ).encode()
    assert status_of(await exchange(port, head)) == 413


async def test_a_chunked_body_over_the_cap_is_refused(port: int) -> None:
    head = (
        f"POST /trials HTTP/1.1\r\nHost: g\r\n{CONTROL_TOKEN_HEADER}: {TOKEN}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    size = 2**20
    chunks = (f"{size:x}\r\n".encode() + b"x" * size + b"\r\n") * 5
    assert status_of(await exchange(port, head, chunks)) == 413


async def test_a_long_request_line_is_refused(port: int) -> None:
    path = "/trials/" + "a" * control.MAX_URL_BYTES
    assert status_of(await exchange(port, f"GET {path} HTTP/1.1\r\n\r\n".encode())) == 414


@pytest.mark.parametrize(
    "headers",
    [
        "".join(f"X-Pad-{i}: 1\r\n" for i in range(control.MAX_HEADERS + 1)),
        "X-Pad: " + "a" * control.MAX_HEADER_BYTES + "\r\n",
    ],
    ids=["too-many", "too-large"],
)
async def test_too_many_or_too_large_headers_are_refused(port: int, headers: str) -> None:
    head = f"GET /healthz HTTP/1.1\r\nHost: g\r\n{headers}\r\n".encode()
    assert status_of(await exchange(port, head)) == 431


async def test_a_500_names_no_exception(port: int) -> None:
    head = f"GET /trials/abc HTTP/1.1\r\n{CONTROL_TOKEN_HEADER}: {TOKEN}\r\n\r\n".encode()
    answer = await exchange(port, head)
    assert status_of(answer) == 500
    assert SECRET.encode() not in answer
    assert b"RuntimeError" not in answer


async def test_requests_within_the_caps_still_work(port: int) -> None:
    head = f"GET /healthz HTTP/1.1\r\nHost: g\r\nX-Pad: {'a' * 4000}\r\n\r\n".encode()
    assert status_of(await exchange(port, head)) == 200
