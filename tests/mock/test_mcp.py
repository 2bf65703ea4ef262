"""MCP over streamable HTTP, with the official `mcp` SDK client as the peer."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from mcp import Client

from tests.mock.conftest import base_url

CONFIG: dict[str, Any] = {
    "mcp": {
        "keepAlive": "100ms",
        "listLatency": {"fixed": "5ms"},
        "tools": [
            {
                "name": "search",
                "description": "finds things",
                "latency": {"fixed": "20ms"},
                "sizes": [{"bytes": "3Ki"}],
            },
            {"name": "broken", "errors": {"fraction": "100%", "shape": "toolError"}},
            {"name": "down", "errors": {"fraction": "100%", "shape": "http", "status": 502}},
        ],
    }
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_client_connects_lists_and_calls(mock_server: Any, mode: str) -> None:
    running = await mock_server(CONFIG)
    async with Client(f"{base_url(running)}/mcp", mode=mode) as client:
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert client.protocol_version == expected
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["search", "broken", "down"]
        result = await client.call_tool("search", {"query": "plimsoll"})
        assert result.is_error is False
        assert len(result.content[0].text) == 3 * 1024  # type: ignore[union-attr]
        failed = await client.call_tool("broken", {})
        assert failed.is_error is True


async def test_sdk_client_listens_on_the_stateless_revision(mock_server: Any) -> None:
    running = await mock_server(CONFIG)
    async with (
        Client(f"{base_url(running)}/mcp") as client,
        client.listen(tools_list_changed=True),
    ):
        await asyncio.sleep(0.05)
        assert len(running.state.streams) == 1
    for _ in range(100):  # the client hung up: the stream must be released
        if not running.state.streams:
            break
        await asyncio.sleep(0.01)
    assert not running.state.streams


async def test_get_stream_sends_keep_alives_and_frees_on_disconnect(mock_server: Any) -> None:
    running = await mock_server(CONFIG)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    async with httpx.AsyncClient(base_url=base_url(running), headers=HEADERS) as http:
        response = await http.post("/mcp", json=init)
        assert response.json()["result"]["protocolVersion"] == "2025-06-18"
        session = response.headers["mcp-session-id"]
        ack = await http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={"mcp-session-id": session},
        )
        assert ack.status_code == 202
        async with http.stream("GET", "/mcp", headers={"mcp-session-id": session}) as stream:
            assert stream.headers["content-type"] == "text/event-stream"
            assert stream.headers["mcp-session-id"] == session
            async for line in stream.aiter_lines():
                if line == ": keep-alive":
                    break
            assert len(running.state.streams) == 1
    for _ in range(100):
        if not running.state.streams and running.state.in_flight == 0:
            break
        await asyncio.sleep(0.01)
    assert not running.state.streams
    assert running.state.in_flight == 0


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, -32700),
        (b"[]", 400, -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', 400, -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":42}', 400, -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}', 200, -32602),
        (b'{"jsonrpc":"2.0","id":1,"method":"no/such"}', 200, -32601),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}', 200, -32602),
    ],
)
async def test_malformed_json_rpc_gets_a_json_rpc_error(
    mock_server: Any, body: bytes, status: int, code: int
) -> None:
    running = await mock_server(CONFIG)
    headers = {**HEADERS, "mcp-session-id": "abc"}
    async with httpx.AsyncClient(base_url=base_url(running), headers=headers) as http:
        response = await http.post("/mcp", content=body)
    assert response.status_code == status
    payload = response.json()
    assert payload["jsonrpc"] == "2.0"
    assert payload["error"]["code"] == code


async def test_handshake_requests_need_a_session_and_http_errors_are_real(mock_server: Any) -> None:
    running = await mock_server(CONFIG)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "down"}}
    async with httpx.AsyncClient(base_url=base_url(running), headers=HEADERS) as http:
        missing = await http.post("/mcp", json=call)
        down = await http.post("/mcp", json=call, headers={"mcp-session-id": "s1"})
        modern_wrong = await http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 8,
                "method": "server/discover",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}},
            },
        )
    assert missing.status_code == 400
    assert "Mcp-Session-Id" in missing.json()["error"]["message"]
    assert down.status_code == 502
    assert down.json()["id"] == 7
    assert modern_wrong.json()["error"]["code"] == -32022
