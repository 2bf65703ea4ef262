"""The mock as an LLM provider: OpenAI `/v1/chat/completions`, Anthropic `/v1/messages`.

`routes.Router` sends those two paths here. Both answer non-streaming (the whole
message after TTFT plus the inter-token gaps) and streaming (SSE: the head and
first token at TTFT, one event per token after each inter-token gap), with usage
counts. A stream is one small object re-armed on a loop timer per token, scheduled
at absolute times so timer lateness never accumulates over a long answer. Input
tokens are estimated as request bytes / 4; output tokens are the configured
count, capped by the request's `max_tokens`.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Callable
from typing import Any

from plimsoll.api.upstream import ErrorShape, Llm
from plimsoll_mock import llm_formats as fmt
from plimsoll_mock import wire
from plimsoll_mock.behaviour import Behaviour
from plimsoll_mock.connection import Connection
from plimsoll_mock.request import Request


class TokenStream:
    """One streaming answer in flight: writes `first`, then `middle` per token, then `last`."""

    __slots__ = ("conn", "due", "first", "itl", "last", "middle", "remaining", "req")

    def __init__(
        self,
        conn: Connection,
        req: Request,
        itl: Callable[[], float],
        n: int,
        first: bytes,
        middle: bytes,
        last: bytes,
    ) -> None:
        self.conn = conn
        self.req = req
        self.itl = itl
        self.remaining = n
        self.first = first
        self.middle = middle
        self.last = last
        self.due = 0.0

    def start(self, ttft: float) -> None:
        self.due = self.conn.now() + ttft
        self.conn.at(self.due, self._tick)

    def _tick(self) -> None:
        conn = self.conn
        if self.first:
            conn.start_stream(self.req, wire.SSE, first=self.first)
            self.first = b""
        else:
            conn.write(self.middle)
        self.remaining -= 1
        if self.remaining <= 0:
            conn.end_stream(self.req, self.last)
            return
        self.due += self.itl()
        conn.at(self.due, self._tick)


class LlmServer:
    def __init__(self, config: Llm, rng: random.Random) -> None:
        self._model = config.model
        self._tokens = config.output_tokens
        self._ttft = Behaviour(config.ttft, config.errors, None, rng)
        self._itl = Behaviour(config.itl, config.errors, None, rng).latency
        self._ids = itertools.count(1)

    def _prepare(
        self, conn: Connection, req: Request, provider: fmt.Provider
    ) -> tuple[dict[str, Any], int, int, float] | None:
        """Parse and decide; None when the call was already answered (bad input, error)."""
        req.route = f"llm/{provider.name}"
        try:
            payload = json.loads(req.body)
            if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
                raise ValueError("the body must be a JSON object with a 'messages' list")
        except ValueError as exc:
            conn.respond(req, 400, provider.error(400, f"invalid request: {exc}"))
            return None
        ttft = self._ttft.latency()
        shape = self._ttft.fails()
        if shape is ErrorShape.TIMEOUT:
            conn.later(self._ttft.timeout_hold, conn.drop, req)
            return None
        if shape is not None:
            status = self._ttft.error_status
            conn.later(
                ttft, conn.respond, req, status, provider.error(status, "simulated overload")
            )
            return None
        cap = payload.get("max_tokens") or payload.get("max_completion_tokens")
        n = min(self._tokens, cap) if isinstance(cap, int) and cap > 0 else self._tokens
        return payload, max(1, len(req.body) // 4), n, ttft

    def _answer(self, conn: Connection, req: Request, provider: fmt.Provider) -> None:
        prepared = self._prepare(conn, req, provider)
        if prepared is None:
            return
        payload, prompt_tokens, n, ttft = prepared
        answer = fmt.Answer(
            id=f"{provider.id_prefix}{next(self._ids)}",
            model=str(payload.get("model") or self._model),
            created=int(time.time()),
            prompt_tokens=prompt_tokens,
            tokens=n,
            capped=n < self._tokens,
            include_usage=bool((payload.get("stream_options") or {}).get("include_usage")),
        )
        if payload.get("stream"):
            first, middle, last = provider.stream(answer)
            TokenStream(conn, req, self._itl, n, first, middle, last).start(ttft)
        else:
            delay = ttft + sum(self._itl() for _ in range(n - 1))
            conn.later(delay, conn.respond, req, 200, provider.complete(answer))

    def openai(self, conn: Connection, req: Request) -> None:
        self._answer(conn, req, fmt.OPENAI)

    def anthropic(self, conn: Connection, req: Request) -> None:
        self._answer(conn, req, fmt.ANTHROPIC)
