"""MCP over streamable HTTP, as a client: request bytes and answer parsing.

Two eras of the protocol, chosen by `workload.mcp_revision`:
- handshake revisions (2025-06-18 and earlier): `initialize`, then the
  `notifications/initialized` notification, a `Mcp-Session-Id` on every later
  request, and the notifications stream as a GET on the endpoint;
- the stateless revision 2026-07-28: no handshake and no session; every request
  carries the revision in `_meta` and in the `MCP-Protocol-Version`, `Mcp-Method`
  (and for tools/call `Mcp-Name`) headers; `server/discover` replaces the
  handshake and a `subscriptions/listen` POST holds the notifications stream.

An answer may come as JSON or as an SSE stream holding the JSON-RPC response.
"""

from __future__ import annotations

import json
from typing import Any

from plimsoll_generator.client import Exchange, build_request
from plimsoll_generator.sse import SseParser

STATELESS = "2026-07-28"
CLIENT_INFO = {"name": "plimsoll-generator", "version": "0.1.0"}


class McpDialect:
    def __init__(self, revision: str, host: str, path: str) -> None:
        self.revision = revision
        self.stateless = revision == STATELESS
        self.host = host
        self.path = path
        self.next_id = 0

    def _meta(self) -> dict[str, Any]:
        return {
            "io.modelcontextprotocol/protocolVersion": self.revision,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        session: str | None,
        extra: dict[str, str] | None = None,
        notification: bool = False,
    ) -> tuple[bytes, int]:
        """(request bytes, JSON-RPC id) of one message; id -1 for a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        params = dict(params or {})
        if self.stateless:
            params["_meta"] = {**params.get("_meta", {}), **self._meta()}
        if params:
            message["params"] = params
        rpc_id = -1
        if not notification:
            self.next_id += 1
            rpc_id = self.next_id
            message["id"] = rpc_id
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if method != "initialize":
            headers["MCP-Protocol-Version"] = self.revision
        if self.stateless:
            headers["Mcp-Method"] = method
            if method == "tools/call":
                headers["Mcp-Name"] = str(params.get("name", ""))
        if session:
            headers["Mcp-Session-Id"] = session
        headers.update(extra or {})
        body = json.dumps(message, separators=(",", ":")).encode()
        return build_request("POST", self.path, self.host, headers, body), rpc_id

    def initialize(self, extra: dict[str, str] | None) -> tuple[bytes, int]:
        if self.stateless:
            return self.request("server/discover", None, None, extra)
        params = {
            "protocolVersion": self.revision,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        }
        return self.request("initialize", params, None, extra)

    def stream(self, session: str | None, extra: dict[str, str] | None) -> bytes:
        """The request that opens the held notifications stream."""
        if self.stateless:
            params = {"notifications": {"toolsListChanged": True}}
            return self.request("subscriptions/listen", params, None, extra)[0]
        headers = {"Accept": "text/event-stream", "MCP-Protocol-Version": self.revision}
        if session:
            headers["Mcp-Session-Id"] = session
        headers.update(extra or {})
        return build_request("GET", self.path, self.host, headers)


def answer(exchange: Exchange, rpc_id: int) -> tuple[str, dict[str, Any] | None, str | None]:
    """(outcome class, JSON-RPC result, message) of one MCP answer."""
    if exchange.error is not None:
        return "transport", None, exchange.error
    status = exchange.status
    if status in (429, 503):
        return "shed", None, f"HTTP {status}"
    if status == 202 and rpc_id < 0:
        return "ok", None, None
    if not 200 <= status < 300:
        return "unexpected", None, f"HTTP {status}"
    body = exchange.text()
    kind = exchange.header(b"content-type") or b""
    messages: list[Any] = []
    try:
        if kind.startswith(b"text/event-stream"):
            parser = SseParser()
            messages = [json.loads(data) for _, data in parser.feed(body + b"\n\n") if data]
        else:
            messages = [json.loads(body)]
    except ValueError:
        return "unexpected", None, "an MCP answer that is not JSON"
    for message in messages:
        if isinstance(message, dict) and message.get("id") == rpc_id:
            if "error" in message:
                error = message["error"]
                return (
                    "unexpected",
                    None,
                    f"JSON-RPC error {error.get('code')}: {error.get('message')}",
                )
            result = message.get("result")
            if not isinstance(result, dict):
                return "unexpected", None, "a JSON-RPC answer without a result object"
            if result.get("isError"):
                return "application", result, "tool error"
            return "ok", result, None
    return "unexpected", None, f"no JSON-RPC answer with id {rpc_id}"
