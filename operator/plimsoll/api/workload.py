"""The workload model: what one unit of load is, and what it sends.

Two models of load:
- `rate` (open model): requests start on schedule at a target arrival rate; the
  level of a trial is requests per second (a max-requests/s search);
- `users` (closed, modeled users): the level is a number of users, each of whom
  holds a stream, calls in bursts, and churns (the MCP-gateway seed), or runs a
  multi-turn conversation (the LLM-proxy seed);
- `replay` (open model over a recorded log): the level is percent of the log's
  own speed (`plimsoll.api.replay`).

The generator receives this model unchanged inside each trial request.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from plimsoll.api.autoscale import ProfilePhase
from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import (
    HEADER_NAME_PATTERN,
    HEADER_VALUE_PATTERN,
    PATH_PATTERN,
    HeaderName,
    HeaderValue,
    RequestBytes,
    Weight,
)
from plimsoll.api.credentials import Credentials
from plimsoll.api.replay import Replay
from plimsoll.api.unique import raise_duplicates
from plimsoll.api.units import Fraction, Seconds


class Protocol(StrEnum):
    HTTP = "http"
    MCP = "mcp"
    OPENAI = "openai"
    ANTHROPIC = "anthropic"


class LoadModel(StrEnum):
    RATE = "rate"  # open model: level = requests per second
    USERS = "users"  # closed model: level = modeled users
    REPLAY = "replay"  # open model over a log: level = percent of its speed


# The one table of what the generator can drive: each (protocol, model) pair it runs, in
# words. The validator refuses any other pair, so `plimsoll validate` and the CRD's
# admission answer before a trial would (the generator's `build_drivers` follows it).
RUNNABLE: dict[tuple[Protocol, LoadModel], str] = {
    (Protocol.HTTP, LoadModel.RATE): "open arrivals of HTTP requests",
    (Protocol.HTTP, LoadModel.USERS): "a closed loop of HTTP clients (no user behaviour)",
    (Protocol.HTTP, LoadModel.REPLAY): "an access log replayed",
    (Protocol.MCP, LoadModel.RATE): "open arrivals of MCP tool calls",
    (Protocol.MCP, LoadModel.USERS): "modeled MCP users",
    (Protocol.OPENAI, LoadModel.USERS): "multi-turn conversations, one per user",
    (Protocol.ANTHROPIC, LoadModel.USERS): "multi-turn conversations, one per user",
}


def runnable_problem(protocol: Protocol, model: LoadModel, has_users: bool) -> str | None:
    """Why the generator cannot drive this pair, None if it can. `has_users`: the workload
    sets `users`, whose user behaviour only MCP's modeled users follow; HTTP's closed loop
    has none to follow (elsewhere `users` holds settings such as the keep-alive timeout)."""
    if (protocol, model) not in RUNNABLE:
        pairs = ", ".join(f"{p.value}+{m.value}" for (p, m) in RUNNABLE if p is protocol)
        return (
            f"protocol {protocol.value!r} with model {model.value!r} cannot run; the "
            f"generator runs {pairs}"
        )
    if has_users and (protocol, model) == (Protocol.HTTP, LoadModel.USERS):
        return (
            f"'users' (the modeled-user behaviour) is built for protocol 'mcp'; protocol "
            f"{protocol.value!r} with model 'users' is {RUNNABLE[(protocol, model)]}: leave "
            "'users' out"
        )
    return None


class Arrival(StrEnum):
    UNIFORM = "uniform"
    POISSON = "poisson"


class OperationKind(StrEnum):
    REQUEST = "request"  # plain HTTP request
    CALL = "call"  # MCP tools/call
    LIST = "list"  # MCP tools/list
    CHAT = "chat"  # one turn of an LLM conversation


class BodySize(PlimsollModel):
    """One entry of a request-body size mix ("mostly 1 KiB, 10% at 64 KiB")."""

    size: RequestBytes = Field(description="A request body size, e.g. 2Ki.")
    weight: Weight = Field(
        1.0, description="How often this size is picked, relative to the others."
    )


# Methods whose requests carry a body (a GET with one is refused by many servers).
BODY_METHODS = ("POST", "PUT", "PATCH")


class Operation(PlimsollModel):
    """One entry of the request mix. Its name labels its latency and errors."""

    name: str = Field(
        min_length=1,
        pattern=r"^[a-z0-9][a-z0-9_.-]*$",
        description="The operation's name; latency bounds and the report name it.",
    )
    weight: Weight = Field(
        1.0, description="How often this operation is picked, relative to the others."
    )
    kind: OperationKind = Field(
        OperationKind.REQUEST,
        description="request (plain HTTP), call (MCP tools/call), list (MCP tools/list) or chat "
        "(an LLM turn).",
    )
    method: str = Field(
        "GET",
        pattern=r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$",
        description="The HTTP method of a request.",
    )
    path: str = Field("/", pattern=PATH_PATTERN, description="The path of a request.")
    headers: dict[str, HeaderValue] = Field(
        default_factory=dict, description="Extra request headers."
    )
    body: str | None = Field(None, description="Request body; '{{n}}' becomes a counter.")
    body_sizes: list[BodySize] | None = Field(
        None,
        min_length=1,
        max_length=16,
        description="A body size mix: each request draws a size by weight and sends a JSON "
        "body of exactly that many bytes (for a 'call', its arguments). Instead of 'body'.",
    )
    tool: HeaderValue | None = Field(
        None,
        max_length=256,
        description="For kind 'call': the MCP tool to call (sent in the Mcp-Name header too: "
        "visible ASCII).",
    )
    expect_status: list[Annotated[int, Field(ge=100, le=599)]] = Field(
        default_factory=lambda: [200],
        min_length=1,
        description="Statuses counted as ok (HTTP statuses, 100 to 599).",
    )

    @field_validator("headers")
    @classmethod
    def _header_names(cls, headers: dict[str, str]) -> dict[str, str]:
        for name in headers:
            if not re.fullmatch(HEADER_NAME_PATTERN, name):
                raise ValueError(
                    f"{name!r} is not a header name: use letters, digits and -!#$%&'*+.^_`|~ "
                    "(no spaces, colons, CR/LF or non-ASCII)"
                )
        return headers

    @model_validator(mode="after")
    def _body_sizes(self) -> Operation:
        if self.body_sizes is None:
            return self
        where = f"operation {self.name!r}: 'bodySizes'"
        if self.kind not in (OperationKind.REQUEST, OperationKind.CALL):
            raise ValueError(
                f"{where} sizes the body of a 'request' or the arguments of a 'call'; "
                f"kind {self.kind.value!r} builds its own body: remove 'bodySizes'"
            )
        if self.body is not None:
            raise ValueError(f"{where} and 'body' both give the body: keep one of them")
        if self.kind is OperationKind.REQUEST and self.method not in BODY_METHODS:
            raise ValueError(
                f"{where} needs a method that sends a body ({', '.join(BODY_METHODS)}); "
                f"it is {self.method}: set 'method: POST'"
            )
        return self


class Users(PlimsollModel):
    """How a modeled user behaves (calibrated on an MCP gateway's real traffic)."""

    hold_stream: bool = Field(True, description="Each user holds one SSE stream all trial.")
    burst_gap_median: Seconds = Field(
        6.0, gt=0, description="Median gap between calls in a burst (above 0)."
    )
    mean_gap: Seconds = Field(90.0, gt=0, description="Mean gap between calls overall (above 0).")
    bot_fraction: Fraction = Field(0.01, description="Users who are bots (unattended scripts).")
    bot_share: Fraction | None = Field(
        0.5,
        description="Share of the users' requests the bots make (the seed: 1% of users made "
        "almost half). Sets each bot's call rate; null: one call every 'botGap' instead.",
    )
    bot_gap: Seconds = Field(
        1.0,
        gt=0,
        description="Without 'botShare' (or when every user is a bot): a bot starts one "
        "call every this long.",
    )
    reconnect_every: Seconds | None = Field(
        600.0, description="Mean time between a user's reconnects (handshake + listing)."
    )
    relist_fraction: Fraction = Field(0.1, description="Calls preceded by a tools/list.")
    page_view_fraction: Fraction = Field(0.05, description="Calls that come with a page view.")
    page_view_path: str = Field(
        "/",
        pattern=PATH_PATTERN,
        description="A page view GETs this path of the target, unless the mix has 'request' "
        "operations: those are then the pages, chosen by weight.",
    )
    keep_alive_timeout: Seconds = Field(
        45.0, gt=0, description="A held stream silent for this long counts as unhealthy."
    )
    ramp: Seconds = Field(5.0, description="Users start spread over this time.")

    @model_validator(mode="after")
    def _gaps(self) -> Users:
        if self.burst_gap_median > self.mean_gap:
            raise ValueError("'burstGapMedian' must not exceed 'meanGap'")
        if self.bot_share is not None and self.bot_share >= 1.0 and self.bot_fraction < 1.0:
            raise ValueError(
                "'botShare' must be below 100% while some users are human "
                "('botFraction' below 100%): humans make some of the requests"
            )
        return self


class Conversation(PlimsollModel):
    """Multi-turn conversations with growing context (the LLM-proxy seed)."""

    turns: int = Field(
        10, ge=1, le=1000, description="Turns in one conversation before a user starts a new one."
    )
    prompt_chars: int = Field(400, ge=1, le=1_000_000, description="Size of each new user message.")
    system_chars: int = Field(
        0,
        ge=0,
        le=1_000_000,
        description="A system prompt of this many characters opening every conversation and "
        "sent with each of its turns (OpenAI: a first message of role 'system'; Anthropic: "
        "the 'system' field), e.g. 2400 for about 600 tokens of fixed context; 0: none.",
    )
    think_time: Seconds = Field(0.0, description="Pause between a reply and the next turn.")
    stream: bool = Field(True, description="Ask for streamed answers (SSE).")
    model: str = Field("plimsoll-echo", description="The model name sent in each request.")
    max_tokens: int = Field(256, ge=1, le=1_000_000, description="max_tokens sent in each request.")


class StreamKind(StrEnum):
    SSE = "sse"
    WEBSOCKET = "websocket"
    MIXED = "mixed"  # half SSE, half WebSocket, as an edge holds them


class StreamsProbe(PlimsollModel):
    """Idle streams held open to measure memory per stream (edges and gateways)."""

    # Before the first trial they are held at a third, two thirds and all of `count`;
    # the slope of the target's memory over those counts is the memory per held stream
    # (plimsoll.run.streams_probe), so a slope needs at least two streams.

    count: int = Field(
        ge=2,
        le=200_000,
        description="Streams held at the most; memory is measured at three counts up to it.",
    )
    kind: StreamKind = Field(StreamKind.SSE, description="sse, websocket, or mixed (half of each).")
    path: str = Field("/", pattern=PATH_PATTERN, description="The path of an SSE stream.")
    ws_path: str | None = Field(
        None, pattern=PATH_PATTERN, description="Path of the WebSocket streams, when not 'path'."
    )
    hold_during_steps: bool = Field(
        False,
        description="Keep them open through the trials, so each trial runs with them held "
        "(opened once, never reopened); false closes them before the first trial.",
    )


class ClientIps(PlimsollModel):
    """A pool of distinct client addresses sent in a header."""

    pool: int = Field(
        ge=1,
        le=10_000_000,
        description="How many distinct client addresses the generators rotate through.",
    )
    header: HeaderName = Field(
        "X-Forwarded-For",
        description="The header that carries the client address to the target (a header "
        "name: letters, digits and -!#$%&'*+.^_`|~).",
    )
    verify: bool = Field(
        True, description="Before the first trial, check that the target honours them."
    )
    verify_path: str | None = Field(
        None,
        pattern=PATH_PATTERN,
        description="A path whose answer echoes the client address the target saw.",
    )


class Workload(PlimsollModel):
    protocol: Protocol = Field(Protocol.HTTP, description="http, mcp, openai or anthropic.")
    model: LoadModel = Field(
        LoadModel.RATE,
        description="rate (open arrivals; level = requests per second) or users (modeled users; "
        "level = users).",
    )
    arrival: Arrival = Field(
        Arrival.POISSON,
        description="How open-model starts are spaced: poisson (random, the default) or uniform.",
    )
    profile: list[ProfilePhase] | None = Field(
        None,
        min_length=1,
        max_length=20,
        description="For search.strategy autoscale: the load over time, phase by phase "
        "(each ramps from the last level to its own, then holds it), e.g. a base, a burst, "
        "a fall.",
    )
    mix: list[Operation] = Field(
        min_length=1, description="The operations sent, each with its weight."
    )
    users: Users | None = None
    conversation: Conversation | None = None
    streams: StreamsProbe | None = None
    client_ips: ClientIps | None = None
    credentials: Credentials | None = Field(
        None,
        description="Model 'users': each user sends its own credential, a header built "
        "from a template with the user's index, e.g. {header: Authorization, template: "
        "'Bearer sk-user-{index}'}, and the identity headers beside it.",
    )
    replay: Replay | None = Field(
        None, description="Model 'replay': the access log to replay, and how to read it."
    )
    mcp_path: str = Field(
        "/mcp", pattern=PATH_PATTERN, description="The target's MCP endpoint path."
    )
    mcp_revision: str = Field(
        "2025-06-18",
        pattern=HEADER_VALUE_PATTERN,
        min_length=1,
        max_length=64,
        description="MCP protocol revision: a handshake era one, or the stateless '2026-07-28' "
        "(sent in the MCP-Protocol-Version header: visible ASCII).",
    )
    timeout: Seconds = Field(
        60.0, gt=0, description="How long a call may take before it counts as a transport error."
    )
    tls_verify: bool = Field(
        True,
        description="Verify an https:// target's certificate (and the floor's). Turn off "
        "only for a self-signed test target; to trust a private CA, set SSL_CERT_FILE.",
    )
    max_in_flight: int = Field(
        10_000, ge=1, description="Open-model starts beyond this many open calls are dropped."
    )
    late_tolerance: Seconds = Field(
        0.100,
        gt=0,
        le=10,
        description="Open model: a start sent more than this after its intended time is not "
        "achieved (the achieved share is on-time ÷ scheduled). Smaller lateness is in the "
        "latency already, which is timed from the intended start.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        raise_duplicates([op.name for op in self.mix], "mix", "operation")
        if self.protocol is Protocol.HTTP:
            wrong = [op.name for op in self.mix if op.kind is not OperationKind.REQUEST]
            if wrong:
                raise ValueError(f"protocol 'http' sends only kind 'request'; see {wrong}")
        for op in self.mix:
            if op.kind is OperationKind.CALL and not op.tool:
                raise ValueError(f"operation {op.name!r} of kind 'call' needs 'tool'")
        if self.protocol in (Protocol.OPENAI, Protocol.ANTHROPIC) and self.conversation is None:
            raise ValueError(f"protocol {self.protocol.value!r} needs 'conversation'")
        if (self.model is LoadModel.REPLAY) != (self.replay is not None):
            raise ValueError(
                "model 'replay' and 'replay' go together: give both (the log to replay) or neither"
            )
        if self.model is LoadModel.REPLAY and self.protocol is not Protocol.HTTP:
            raise ValueError("model 'replay' replays HTTP requests: use protocol 'http'")
        if self.conversation is not None and self.model is not LoadModel.USERS:
            raise ValueError("'conversation' needs model 'users' (each user is a conversation)")
        if self.credentials is not None:
            self._credentials_fit(self.credentials)
        # Last: the narrower fixes above name what to change first; this catches the rest.
        problem = runnable_problem(self.protocol, self.model, self.users is not None)
        if problem is not None:
            raise ValueError(problem)
        return self

    def _credentials_fit(self, credentials: Credentials) -> None:
        if self.model is not LoadModel.USERS:
            raise ValueError(
                f"'credentials' are per modeled user: model {self.model.value!r} has no "
                "users; use model 'users', or put one key in the operations' 'headers'"
            )
        for header in credentials.header_names():
            name = header.lower()
            clashing = [op.name for op in self.mix if name in {h.lower() for h in op.headers}]
            if self.client_ips is not None and self.client_ips.header.lower() == name:
                clashing.append("clientIps")
            if clashing:
                field = "header" if header == credentials.header else f"identity.{header}"
                raise ValueError(
                    f"credentials.{field} {header!r} is also set by {clashing}: each user's "
                    "own value replaces it, so remove it there"
                )
