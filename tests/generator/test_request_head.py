"""The generator refuses a request head that could be split, before writing a byte.

The model refuses these already (tests/api); here they reach the generator past the
model (a TrialRequest changed after validation), as a bug or a hand-built request would:
`build_request` refuses, and a whole trial against a real loopback server fails naming
the part while the server receives nothing.
"""

from __future__ import annotations

import asyncio

import pytest

from plimsoll_generator.client import build_request
from plimsoll_generator.request_head import RequestRefusedError
from plimsoll_generator.websocket import WsStream
from tests.generator.helpers import request, run


@pytest.mark.parametrize(
    ("method", "path", "headers", "named"),
    [
        ("GET", "/", {"X-A": "a\r\nX-Injected: 1"}, "header X-A's value"),
        ("GET", "/", {"X-A": "a\nb"}, "header X-A's value"),
        ("GET", "/", {"X-A": "a\x00b"}, "header X-A's value"),
        ("GET", "/", {"X-A": "caf\u00e9"}, "header X-A's value"),  # Latin-1, still not ASCII
        ("GET", "/", {"X-A": "\u2603"}, "header X-A's value"),  # not even Latin-1
        ("GET", "/", {"X-A: b\r\nX-B": "1"}, "header name"),
        ("GET", "/", {"X A": "1"}, "header name"),
        ("GET", "/", {"\u00c9": "1"}, "header name"),
        ("GET", "/", {"": "1"}, "header name"),
        ("GET", "/a b", {}, "path"),
        ("GET", "/a\r\nHost: evil", {}, "path"),
        ("GET", "/caf\u00e9", {}, "path"),
        ("GET /x HTTP/1.1\r\n", "/", {}, "method"),
        ("G ET", "/", {}, "method"),
    ],
)
def test_build_request_refuses_what_would_split_the_head(
    method: str, path: str, headers: dict[str, str], named: str
) -> None:
    with pytest.raises(RequestRefusedError, match="request not sent") as refused:
        build_request(method, path, "target:8080", headers)
    assert named in str(refused.value)


def test_a_host_with_cr_lf_is_refused_and_an_ordinary_request_is_built() -> None:
    with pytest.raises(RequestRefusedError, match="host"):
        build_request("GET", "/", "target:80\r\nX-Injected: 1")
    built = build_request("POST", "/a?b=c&d=%20", "[::1]:8080", {"X-Tenant": "a b\tc"}, b"{}")
    assert built.startswith(b"POST /a?b=c&d=%20 HTTP/1.1\r\nHost: [::1]:8080\r\n")
    assert b"X-Tenant: a b\tc\r\n" in built


def test_the_websocket_upgrade_is_checked_too() -> None:
    with pytest.raises(RequestRefusedError, match="path"):
        WsStream(None, "target:80", "/ws\r\nX-Injected: 1")  # type: ignore[arg-type]


async def test_a_trial_with_an_injected_header_fails_and_sends_nothing() -> None:
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await reader.read(65536))
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        req = request(f"http://127.0.0.1:{port}", {"mix": [{"name": "get", "path": "/"}]})
        req.workload.mix[0].headers["X-A"] = "a\r\nX-Injected: 1"  # past the model
        result = await run(req)
        assert result.state == "failed"
        assert any("request not sent: header X-A's value" in e for e in result.errors)
        await asyncio.sleep(0.1)
        assert received == []
    finally:
        server.close()
        await server.wait_closed()
