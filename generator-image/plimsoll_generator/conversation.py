"""LLM conversations (the LLM-proxy seed): N users x M turns, growing history.

Each user runs a conversation of `turns` turns; every turn sends the whole
history so far plus a new user message of `prompt_chars` characters, in the
OpenAI chat or the Anthropic messages format, streamed or not. Time to first
token (first content delta) and total time are recorded per turn; after the
last turn the user starts a new conversation, so the level holds all trial.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

from plimsoll.api.workload import Conversation, Protocol
from plimsoll_generator.client import Exchange, build_request, upstream_seconds
from plimsoll_generator.context import TrialContext
from plimsoll_generator.recorder import OperationStats, classify
from plimsoll_generator.sse import SseParser

PATHS = {Protocol.OPENAI: "/v1/chat/completions", Protocol.ANTHROPIC: "/v1/messages"}
_WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "plimsoll",
    "measures",
    "load",
]


def prompt(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars]


def turn_body(
    config: Conversation, protocol: Protocol, history: list[dict[str, str]], system: str
) -> bytes:
    """The request of one turn: the conversation so far, after its system prompt (in the
    messages for OpenAI, a field of its own for Anthropic, as each API takes it)."""
    messages = history
    if system and protocol is Protocol.OPENAI:
        messages = [{"role": "system", "content": system}, *history]
    body: dict[str, Any] = {
        "model": config.model,
        "max_tokens": config.max_tokens,
        "messages": messages,
        "stream": config.stream,
    }
    if system and protocol is Protocol.ANTHROPIC:
        body["system"] = system
    return json.dumps(body).encode()


def delta_text(protocol: Protocol, event: str, data: str) -> str | None:
    """The text a streamed event adds, or None when it carries none."""
    if not data or data == "[DONE]":
        return None
    try:
        message = json.loads(data)
    except ValueError:
        return None
    if protocol is Protocol.OPENAI:
        choices = message.get("choices") or [{}]
        return (choices[0].get("delta") or {}).get("content") or None
    if message.get("type") == "content_block_delta":
        return (message.get("delta") or {}).get("text") or None
    return None


def whole_text(protocol: Protocol, body: bytes) -> str:
    message = json.loads(body)
    if protocol is Protocol.OPENAI:
        return str(message["choices"][0]["message"]["content"])
    return "".join(block.get("text", "") for block in message["content"])


class Turn(Exchange):
    """One streamed (or not) completion; notes the first token's arrival."""

    __slots__ = ("first_token", "parser", "pieces", "protocol", "streamed")

    def __init__(self, protocol: Protocol, streamed: bool, timeout: float) -> None:
        super().__init__(keep_body=not streamed, timeout=timeout)
        self.protocol = protocol
        self.streamed = streamed
        self.parser = SseParser()
        self.first_token = 0.0
        self.pieces: list[str] = []

    def on_body(self, chunk: bytes) -> None:
        super().on_body(chunk)
        if not self.streamed:
            if not self.first_token:
                self.first_token = time.perf_counter()
            return
        for event, data in self.parser.feed(chunk):
            piece = delta_text(self.protocol, event, data)
            if piece:
                if not self.first_token:
                    self.first_token = time.perf_counter()
                self.pieces.append(piece)


class Conversations:
    def __init__(self, ctx: TrialContext, users: int) -> None:
        workload = ctx.request.workload
        assert workload.conversation is not None  # the workload validator requires it
        self.ctx = ctx
        self.users = users
        self.config = workload.conversation
        self.protocol = workload.protocol
        self.op = workload.mix[0]
        path = self.op.path if self.op.path != "/" else PATHS[self.protocol]
        self.path = ctx.path(path)
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self.tasks = self.ctx.start_users(self.users, self._user)

    def stop(self) -> None:
        for task in self.tasks:
            task.cancel()

    async def _user(self, index: int) -> None:
        ctx = self.ctx
        rng = random.Random(f"{ctx.request.seed}/{index}")
        headers = {"Content-Type": "application/json", **self.op.headers}
        if ctx.ips is not None:
            headers[ctx.ips.header] = ctx.ips.for_index(index)
        credentials = ctx.request.workload.credentials
        if credentials is not None:  # this user's own key (the model refuses a clash)
            headers.update(credentials.headers_for(index))
        # Spread the users' first turns over a second so they do not start in lockstep.
        if not await ctx.sleep_until(time.perf_counter() + rng.uniform(0, 1.0)):
            return
        while True:
            history: list[dict[str, str]] = []
            system = prompt(rng, self.config.system_chars) if self.config.system_chars else ""
            for _ in range(self.config.turns):
                history.append({"role": "user", "content": prompt(rng, self.config.prompt_chars)})
                reply = await self._turn(history, system, headers)
                if reply is None:
                    history.pop()
                    if not await ctx.sleep_until(time.perf_counter() + 1.0):
                        return
                    break
                history.append({"role": "assistant", "content": reply})
                if not await ctx.sleep_until(time.perf_counter() + self.config.think_time):
                    return

    @staticmethod
    def _added(stats: OperationStats, turn: Turn, start: float, end: float) -> float:
        """What the target added to a turn (-1: not measured). The upstream's
        Server-Timing travels in its head, which a streamed answer sends with its first
        token: for a stream it is the upstream's time to first token, so the client's
        time to first token minus it is what the target added before the tokens flowed;
        a whole answer's is its total."""
        upstream = upstream_seconds(turn.server_timing)
        if upstream is None:
            return -1.0
        if turn.streamed:
            if not turn.first_token:
                return -1.0
            added = max(turn.first_token - start - upstream, 0.0)
        else:
            added = max(end - start - upstream, 0.0)
        stats.added.add(added)
        return added

    async def _turn(
        self, history: list[dict[str, str]], system: str, headers: dict[str, str]
    ) -> str | None:
        ctx = self.ctx
        payload = build_request(
            "POST",
            self.path,
            ctx.host_header,
            headers,
            turn_body(self.config, self.protocol, history, system),
        )
        turn = Turn(self.protocol, self.config.stream, ctx.request.workload.timeout)
        start = time.perf_counter()
        record = ctx.measuring(start)
        ctx.in_flight += 1
        try:
            await ctx.pool.fetch(payload, turn)
        finally:
            ctx.in_flight -= 1
        end = time.perf_counter()
        outcome = classify(turn.status, self.op.expect_status, turn.error)
        reply: str | None = None
        if outcome == "ok":
            try:
                reply = (
                    "".join(turn.pieces)
                    if turn.streamed
                    else whole_text(self.protocol, turn.text())
                )
            except (ValueError, KeyError, IndexError, TypeError):
                outcome = "unexpected"
            if reply == "" and turn.streamed:
                outcome = "unexpected"  # a stream with no tokens is not an answer
        if record:
            ctx.sent += 1
            ctx.intended += 1
            ctx.on_time += 1  # a turn goes when the last reply ended: there is no schedule
            stats = ctx.recorder.op(self.op.name)
            ctx.recorder.outcome(
                stats, outcome, turn.error or f"{self.op.name}: HTTP {turn.status}"
            )
            if outcome != "transport":
                stats.latency.add(end - start)
                ttft = -1.0
                if turn.first_token:
                    ttft = turn.first_token - start
                    stats.ttft.add(ttft)
                added = self._added(stats, turn, start, end)
                if outcome == "ok":
                    stats.judge(end - start, ttft, added)
        return reply if outcome == "ok" else None
