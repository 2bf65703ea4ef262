"""The wire formats of the two LLM APIs the mock imitates: bodies, SSE events, errors.

`llm.LlmServer` decides what to answer (tokens, timing); this module only knows
how OpenAI's chat completions and Anthropic's messages spell it, so a real SDK
client parses the mock's answers. Streamed answers are returned as three
pre-framed byte strings (first token, every middle token, the tail) so a token
costs one `write` of bytes built once per answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plimsoll_mock import wire

TOKEN = "lorem "


@dataclass(frozen=True, slots=True)
class Answer:
    id: str
    model: str
    created: int
    prompt_tokens: int
    tokens: int
    capped: bool
    include_usage: bool


def _sse(data: object, event: str | None = None) -> bytes:
    head = b"event: %s\n" % event.encode() if event else b""
    return head + b"data: " + wire.dumps(data) + b"\n\n"


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    id_prefix: str
    complete: Callable[[Answer], bytes]
    stream: Callable[[Answer], tuple[bytes, bytes, bytes]]
    error: Callable[[int, str], bytes]


def _openai_usage(a: Answer) -> dict[str, int]:
    return {
        "prompt_tokens": a.prompt_tokens,
        "completion_tokens": a.tokens,
        "total_tokens": a.prompt_tokens + a.tokens,
    }


def _openai_complete(a: Answer) -> bytes:
    return wire.dumps(
        {
            "id": a.id,
            "object": "chat.completion",
            "created": a.created,
            "model": a.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": TOKEN * a.tokens},
                    "finish_reason": "length" if a.capped else "stop",
                    "logprobs": None,
                }
            ],
            "usage": _openai_usage(a),
        }
    )


def _openai_stream(a: Answer) -> tuple[bytes, bytes, bytes]:
    base = {"id": a.id, "object": "chat.completion.chunk", "created": a.created, "model": a.model}

    def chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    first = chunk({"role": "assistant", "content": TOKEN})
    tail = chunk({}, "length" if a.capped else "stop")
    if a.include_usage:
        tail += _sse({**base, "choices": [], "usage": _openai_usage(a)})
    tail += b"data: [DONE]\n\n"
    return wire.chunk(first), wire.chunk(chunk({"content": TOKEN})), wire.chunk(tail)


def _openai_error(status: int, message: str) -> bytes:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return wire.dumps({"error": {"message": message, "type": kind, "param": None, "code": None}})


def _anthropic_stop(a: Answer) -> str:
    return "max_tokens" if a.capped else "end_turn"


def _anthropic_complete(a: Answer) -> bytes:
    return wire.dumps(
        {
            "id": a.id,
            "type": "message",
            "role": "assistant",
            "model": a.model,
            "content": [{"type": "text", "text": TOKEN * a.tokens}],
            "stop_reason": _anthropic_stop(a),
            "stop_sequence": None,
            "usage": {"input_tokens": a.prompt_tokens, "output_tokens": a.tokens},
        }
    )


def _anthropic_stream(a: Answer) -> tuple[bytes, bytes, bytes]:
    def delta() -> bytes:
        body = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": TOKEN},
        }
        return _sse(body, "content_block_delta")

    start = {
        "type": "message_start",
        "message": {
            "id": a.id,
            "type": "message",
            "role": "assistant",
            "model": a.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": a.prompt_tokens, "output_tokens": 1},
        },
    }
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    first = (
        _sse(start, "message_start")
        + _sse(block, "content_block_start")
        + _sse({"type": "ping"}, "ping")
        + delta()
    )
    tail = (
        _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        + _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": _anthropic_stop(a), "stop_sequence": None},
                "usage": {"output_tokens": a.tokens},
            },
            "message_delta",
        )
        + _sse({"type": "message_stop"}, "message_stop")
    )
    return wire.chunk(first), wire.chunk(delta()), wire.chunk(tail)


def _anthropic_error(status: int, message: str) -> bytes:
    kind = {400: "invalid_request_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    return wire.dumps({"type": "error", "error": {"type": kind, "message": message}})


OPENAI = Provider("openai", "chatcmpl-mock", _openai_complete, _openai_stream, _openai_error)
ANTHROPIC = Provider(
    "anthropic", "msg_mock", _anthropic_complete, _anthropic_stream, _anthropic_error
)
