"""Each trial resolves the target's host again and refuses it in a refused network.

Real resolution (`localhost` from /etc/hosts) and a real loopback server: with the
cluster's rules (loopback refused) the trial fails naming the address and the server
sees no connection; with rules that allow it the trial runs, pinned to the address it
checked.
"""

from __future__ import annotations

import asyncio

import pytest

from plimsoll_generator.target_address import TargetRefusedError, vetted_address
from tests.generator.helpers import request, run

MIX = {"mix": [{"name": "get", "path": "/"}]}


async def test_no_networks_means_no_lookup() -> None:
    assert await vetted_address(request("http://localhost:1", MIX)) is None


async def test_a_name_resolving_into_a_refused_network_is_refused() -> None:
    req = request("http://localhost:1", MIX, refusedNetworks=["10.0.0.0/8", "127.0.0.0/8"])
    with pytest.raises(
        TargetRefusedError, match=r"now resolves to 127\.0\.0\.1, in 127\.0\.0\.0/8"
    ):
        await vetted_address(req)


async def test_a_name_that_does_not_resolve_is_refused() -> None:
    req = request("http://no-such-host.invalid:1", MIX, refusedNetworks=["127.0.0.0/8"])
    with pytest.raises(TargetRefusedError, match="does not resolve"):
        await vetted_address(req)


def test_a_network_that_is_not_one_is_refused_by_the_model() -> None:
    with pytest.raises(ValueError, match="is not a network"):
        request("http://localhost:1", MIX, refusedNetworks=["metadata"])


async def _serve() -> tuple[asyncio.Server, int, list[bytes]]:
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # finally: a handler cancelled when the test's loop closes still closes its
        # writer, or the garbage collector reports it open in a later test.
        try:
            while True:
                head = await reader.read(65536)
                if not head:
                    break
                received.append(head)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], received


async def test_a_trial_to_a_refused_address_fails_before_connecting() -> None:
    server, port, received = await _serve()
    try:
        req = request(f"http://localhost:{port}", MIX, level=20, refusedNetworks=["127.0.0.0/8"])
        result = await run(req)
        assert result.state == "failed"
        assert any("resolves to 127.0.0.1" in e for e in result.errors), result.errors
        assert received == []
    finally:
        server.close()
        await server.wait_closed()


async def test_a_trial_to_an_allowed_address_runs_pinned_to_it() -> None:
    server, port, received = await _serve()
    try:
        req = request(f"http://localhost:{port}", MIX, level=20, refusedNetworks=["169.254.0.0/16"])
        result = await run(req)
        assert result.state == "done", result.errors
        assert result.operations["get"].outcomes.ok > 0
        assert received
        assert received[0].startswith(b"GET / HTTP/1.1\r\nHost: localhost:")
    finally:
        server.close()
        await server.wait_closed()
