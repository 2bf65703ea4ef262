"""JSON-RPC 2.0 framing for the MCP endpoint: parsing, results and error objects.

`mcp.McpServer` calls `parse` on every POST body and builds its answers with
`result`/`error`. A result is assembled from bytes (`{"jsonrpc":"2.0","id":` +
id + `,"result":` + cached result + `}`) so a large, cached tool result is
never re-encoded per call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from plimsoll_mock import wire

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022


@dataclass(slots=True)
class Message:
    """A JSON-RPC message from the client: a request (with `id`) or a notification."""

    method: str | None
    id: Any
    params: dict[str, Any]
    has_id: bool

    @property
    def id_bytes(self) -> bytes:
        return wire.dumps(self.id)


class JsonRpcError(Exception):
    """A JSON-RPC error to send back; `http_status` is 400 for unparseable input."""

    def __init__(
        self, code: int, message: str, id_: Any = None, http_status: int = 200, data: Any = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.id = id_
        self.http_status = http_status
        self.data = data

    def body(self) -> bytes:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return wire.dumps({"jsonrpc": "2.0", "id": self.id, "error": err})


def parse(body: bytes) -> Message:
    """One JSON-RPC message from a POST body, or a `JsonRpcError` that says what is wrong."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise JsonRpcError(PARSE_ERROR, f"Parse error: {exc}", http_status=400) from exc
    if isinstance(data, list):
        raise JsonRpcError(
            INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported", http_status=400
        )
    if not isinstance(data, dict):
        raise JsonRpcError(INVALID_REQUEST, "Invalid Request: not a JSON object", http_status=400)
    id_ = data.get("id")
    has_id = "id" in data
    if (has_id and not (id_ is None or isinstance(id_, str | int))) or isinstance(id_, bool):
        raise JsonRpcError(
            INVALID_REQUEST, "Invalid Request: 'id' must be a string or an integer", http_status=400
        )
    if data.get("jsonrpc") != "2.0":
        raise JsonRpcError(
            INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\"", id_, http_status=400
        )
    method = data.get("method")
    if method is None and ("result" in data or "error" in data):
        return Message(None, id_, {}, has_id)  # a client's answer to a server request
    if not isinstance(method, str):
        raise JsonRpcError(
            INVALID_REQUEST, "Invalid Request: 'method' must be a string", id_, http_status=400
        )
    params = data.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcError(INVALID_PARAMS, "Invalid params: 'params' must be an object", id_)
    return Message(method, id_, params, has_id)


def result(id_bytes: bytes, encoded_result: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (id_bytes, encoded_result)


def notification(method: str, params: dict[str, Any]) -> bytes:
    return wire.dumps({"jsonrpc": "2.0", "method": method, "params": params})


def sse_event(payload: bytes) -> bytes:
    """A chunk-framed SSE `message` event carrying one JSON-RPC message."""
    return wire.chunk(b"event: message\ndata: %s\n\n" % payload)
