"""MCP load: modeled users (the gateway seed) and a constant-rate probe.

`McpUsers`: each user connects (handshake + tools/list, or server/discover on
the stateless revision), holds its notifications stream, and calls in bursts
drawn by `behaviour.UserBehaviour`; bots start calls at a steady rate, several
open at once (`behaviour.bot_rate`, `behaviour.bot_in_flight`); users reconnect
now and then, re-list tools before some calls, and some calls come with a page
view. Each user sends its own client address when a pool is configured.

`McpRate`: the open model over MCP calls (synthetic probes), one
session shared by the process (none on the stateless revision).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from dataclasses import dataclass
from typing import Any

from plimsoll.api.workload import Operation, OperationKind
from plimsoll_generator.behaviour import UserBehaviour, bot_in_flight, bot_rate
from plimsoll_generator.bodies import SizeMix, padded_arguments
from plimsoll_generator.client import Exchange, build_request, upstream_seconds
from plimsoll_generator.context import TrialContext
from plimsoll_generator.mcp import McpDialect, answer
from plimsoll_generator.open_model import OpenModel, TimedExchange
from plimsoll_generator.sse import HeldStream, StreamWatch

PAGE_VIEW = "page_view"
INITIALIZE = "initialize"
RELIST = "relist"


def call_params(op: Operation, counter: int, size: int | None = None) -> dict[str, Any]:
    """A call's params: the body template's arguments, or (given a `size` drawn from
    its `bodySizes`) arguments whose compact JSON is exactly that many bytes."""
    if op.kind is OperationKind.LIST:
        return {}
    arguments: Any = {}
    if op.body is not None:
        arguments = json.loads(op.body.replace("{{n}}", str(counter)))
    elif size is not None:
        arguments = padded_arguments(size)
    return {"name": op.tool, "arguments": arguments}


def size_mixes(ops: list[Operation]) -> dict[str, SizeMix]:
    """Each operation's body size mix, by name (built once per trial)."""
    return {op.name: SizeMix(op.body_sizes) for op in ops if op.body_sizes}


def draw_size(mixes: dict[str, SizeMix], op: Operation, rng: random.Random) -> int | None:
    mix = mixes.get(op.name)
    return mix.draw(rng) if mix is not None else None


def method_of(op: Operation) -> str:
    return "tools/list" if op.kind is OperationKind.LIST else "tools/call"


class McpSession:
    """One MCP client identity: its dialect, session id and extra headers."""

    def __init__(self, ctx: TrialContext, extra: dict[str, str], bot: bool = False) -> None:
        workload = ctx.request.workload
        self.ctx = ctx
        self.bot = bot  # its requests count in `bot_requests` too
        self.dialect = McpDialect(
            workload.mcp_revision, ctx.host_header, ctx.path(workload.mcp_path)
        )
        self.extra = extra
        self.session: str | None = None
        # Set while a handshake is under way (until one succeeds): a bot's calls share the
        # session, and one sent meanwhile would carry no session id (HTTP 400 from any MCP
        # server; a 100,000-user run sent such calls). A client waits for its new session.
        self.handshake: asyncio.Future[None] | None = None

    async def rpc(self, name: str, method: str, params: dict[str, Any] | None) -> str:
        """Send one JSON-RPC request, record it under `name`, return its outcome class."""
        if self.handshake is not None:
            await asyncio.shield(self.handshake)  # a waiter's cancel must not cancel it
        payload, rpc_id = self.dialect.request(method, params, self.session, self.extra)
        return await self._timed(name, payload, rpc_id)

    async def _timed(self, name: str, payload: bytes, rpc_id: int) -> str:
        ctx = self.ctx
        start = time.perf_counter()
        record = ctx.measuring(start)
        ctx.in_flight += 1
        if record:
            ctx.sent += 1
            ctx.intended += 1
            ctx.on_time += 1  # sent when the user decided to: there is no schedule
            ctx.bot_requests += self.bot
        exchange = Exchange(keep_body=True, keep_headers=True, timeout=ctx.request.workload.timeout)
        try:
            exchange = await ctx.pool.fetch(payload, exchange)
        finally:
            ctx.in_flight -= 1
        outcome, _, message = answer(exchange, rpc_id)
        if record:
            stats = ctx.recorder.op(name)
            ctx.recorder.outcome(stats, outcome, f"{name}: {message}" if message else None)
            if outcome != "transport":
                stats.timed(
                    time.perf_counter() - start,
                    upstream_seconds(exchange.server_timing),
                    outcome == "ok",
                )
        if rpc_id >= 0 and exchange.status == 200 and name == INITIALIZE:
            session = exchange.header(b"mcp-session-id")
            self.session = session.decode() if session else None
        return outcome

    async def connect(self) -> bool:
        """The handshake (or discovery), the initialized notification, the listing."""
        ctx = self.ctx
        self.session = None
        if self.handshake is None:  # a failed one stays pending: its waiters wait on
            self.handshake = asyncio.get_running_loop().create_future()
        payload, rpc_id = self.dialect.initialize(self.extra)
        if await self._timed(INITIALIZE, payload, rpc_id) != "ok":
            return False
        handshake, self.handshake = self.handshake, None
        handshake.set_result(None)
        if not self.dialect.stateless:
            note, _ = self.dialect.request(
                "notifications/initialized", None, self.session, self.extra, notification=True
            )
            await ctx.pool.fetch(note)
        return await self.rpc(RELIST, "tools/list", {}) != "transport"


@dataclass
class _Connected:
    """One modeled user's connection: its session, held stream and next reconnect."""

    session: McpSession
    connected: bool = False
    stream: HeldStream | None = None
    reconnect_at: float = 0.0


class McpUsers:
    def __init__(self, ctx: TrialContext, users: int) -> None:
        workload = ctx.request.workload
        if workload.users is None:
            raise ValueError("protocol 'mcp' with model 'users' needs 'workload.users'")
        self.ctx = ctx
        self.users = users
        self.config = workload.users
        self.calls = [
            op for op in workload.mix if op.kind in (OperationKind.CALL, OperationKind.LIST)
        ]
        # A page view is a plain GET of `pageViewPath` (the seed's dashboard), or one of
        # the mix's `request` operations by weight when the mix names the pages itself.
        pages = [op for op in workload.mix if op.kind is OperationKind.REQUEST]
        self.pages = pages or [Operation(name=PAGE_VIEW, path=self.config.page_view_path)]
        self.page_weights = [op.weight for op in self.pages]
        if not self.calls:
            raise ValueError("an MCP users workload needs at least one 'call' or 'list' in 'mix'")
        self.weights = [op.weight for op in self.calls]
        self.sizes = size_mixes(self.calls)
        self.watch = StreamWatch(
            ctx.streams, self.config.keep_alive_timeout, lambda: ctx.measuring(time.perf_counter())
        )
        self.tasks: list[asyncio.Task[None]] = []
        self.bot_calls: set[asyncio.Task[None]] = set()  # bots' open calls, for `stop`
        self.bot_rate = bot_rate(self.config)
        self.bot_limit = bot_in_flight(self.bot_rate, workload.timeout, workload.max_in_flight)
        self.counter = 0

    def start(self) -> None:
        self.watch.start()
        self.tasks = self.ctx.start_users(self.users, self._user)

    def stop(self) -> None:
        for task in [*self.tasks, *self.bot_calls]:
            task.cancel()
        self.watch.stop()

    def _headers(self, index: int) -> dict[str, str]:
        """What user `index` sends on every request: its address and its credential."""
        ips = self.ctx.ips
        headers = {ips.header: ips.for_index(index)} if ips is not None else {}
        credentials = self.ctx.request.workload.credentials
        if credentials is not None:
            headers.update(credentials.headers_for(index))
        return headers

    def _open_stream(self, session: McpSession) -> HeldStream | None:
        if not self.config.hold_stream:
            return None
        stream = HeldStream(self.watch)
        self.ctx.pool.send(
            session.dialect.stream(session.session, session.extra), stream, fresh=True
        )
        return stream

    async def _user(self, index: int) -> None:
        ctx = self.ctx
        rng = random.Random(f"{ctx.request.seed}/{index}")
        behaviour = UserBehaviour(self.config, index, rng)
        user = _Connected(McpSession(ctx, self._headers(index), bot=behaviour.bot))
        if not await ctx.sleep_until(time.perf_counter() + behaviour.first_delay()):
            return
        await self._reconnect(user, behaviour)
        if behaviour.bot:
            await self._bot(user, behaviour, rng)
            return
        due = time.perf_counter() + behaviour.first_gap()
        while await ctx.sleep_until(due):
            if not await self._maybe_reconnect(user, behaviour):
                await self._call(user, behaviour, rng)
            # Gaps run start to start; a call that outlasted its gap is followed at once.
            due = max(due + behaviour.next_gap(), time.perf_counter())

    async def _bot(self, user: _Connected, behaviour: UserBehaviour, rng: random.Random) -> None:
        """Start a call every 1/rate seconds, at most `bot_limit` open: when all are open
        the bot waits for one to end (a script with that many workers)."""
        ctx = self.ctx
        interval = 1.0 / self.bot_rate
        open_calls = asyncio.Semaphore(self.bot_limit)
        due = time.perf_counter() + rng.uniform(0.0, interval)
        while await ctx.sleep_until(due):
            await open_calls.acquire()
            if ctx.stopped.is_set() or time.perf_counter() >= ctx.end:
                return  # the wait for a free slot outlasted the trial
            if await self._maybe_reconnect(user, behaviour):
                open_calls.release()
                due = time.perf_counter() + interval
                continue
            task = asyncio.get_running_loop().create_task(self._call(user, behaviour, rng))
            self.bot_calls.add(task)
            task.add_done_callback(self.bot_calls.discard)
            task.add_done_callback(lambda _: open_calls.release())
            # Never catch up in a burst after waiting for a free slot.
            due = max(due + interval, time.perf_counter())

    async def _reconnect(self, user: _Connected, behaviour: UserBehaviour) -> None:
        if user.stream is not None:
            user.stream.cancel()
        user.connected = await user.session.connect()
        user.stream = self._open_stream(user.session) if user.connected else None
        user.reconnect_at = time.perf_counter() + behaviour.next_reconnect()

    async def _maybe_reconnect(self, user: _Connected, behaviour: UserBehaviour) -> bool:
        """Reconnect when the user is not connected or its reconnect is due; True if so."""
        if user.connected and time.perf_counter() < user.reconnect_at:
            return False
        await self._reconnect(user, behaviour)
        return True

    async def _call(self, user: _Connected, behaviour: UserBehaviour, rng: random.Random) -> None:
        """One call of the mix, after a tools/list now and then, with a page view now and then."""
        stream = user.stream
        if stream is not None and stream.error is not None and not stream.cancelled:
            user.stream = self._open_stream(user.session)  # the server dropped it: reopen
        session = user.session
        if behaviour.relist():
            await session.rpc(RELIST, "tools/list", {})
        op = rng.choices(self.calls, self.weights)[0]
        self.counter += 1
        call = session.rpc(
            op.name, method_of(op), call_params(op, self.counter, draw_size(self.sizes, op, rng))
        )
        if behaviour.page_view():
            await asyncio.gather(call, self._page_view(session, rng))
        else:
            await call

    async def _page_view(self, session: McpSession, rng: random.Random) -> None:
        ctx = self.ctx
        op = rng.choices(self.pages, self.page_weights)[0]
        payload = build_request(
            op.method, ctx.path(op.path), ctx.host_header, {**op.headers, **session.extra}
        )
        start = time.perf_counter()
        record = ctx.measuring(start)
        ctx.in_flight += 1
        try:
            exchange = await ctx.pool.fetch(payload, Exchange(timeout=ctx.request.workload.timeout))
        finally:
            ctx.in_flight -= 1
        if record:
            ctx.sent += 1
            ctx.intended += 1
            ctx.on_time += 1  # sent when the user decided to: there is no schedule
            ctx.page_views += 1
            ctx.bot_requests += session.bot
            stats = ctx.recorder.op(op.name)
            outcome = (
                "transport"
                if exchange.error
                else (
                    "ok"
                    if exchange.status in op.expect_status
                    else "shed"
                    if exchange.status in (429, 503)
                    else "unexpected"
                )
            )
            ctx.recorder.outcome(
                stats, outcome, exchange.error or f"{op.name}: HTTP {exchange.status}"
            )
            if exchange.error is None:
                stats.timed(
                    time.perf_counter() - start,
                    upstream_seconds(exchange.server_timing),
                    outcome == "ok",
                )


class McpRate(OpenModel):
    """Open-model MCP calls: each start is one tools/call or tools/list."""

    def __init__(self, ctx: TrialContext, rate: float) -> None:
        super().__init__(ctx, rate)
        self.keep_body = True
        self.session = McpSession(ctx, {})
        self.ops = {op.name: op for op in ctx.request.workload.mix}
        self.sizes = size_mixes(ctx.request.workload.mix)
        self.starter: asyncio.Task[None] | None = None

    def start(self) -> None:
        async def connect_then_tick() -> None:
            with contextlib.suppress(Exception):
                await self.session.connect()
            self._tick()

        self.starter = asyncio.get_running_loop().create_task(connect_then_tick())

    def payload(self, exchange: TimedExchange, ip_index: int) -> bytes:
        op = self.ops[exchange.entry.name]
        if op.kind is OperationKind.REQUEST:
            return self.mix.payload(exchange.entry, ip_index)
        extra = {}
        if self.ctx.ips is not None:
            extra[self.ctx.ips.header] = self.ctx.ips.for_index(ip_index)
        payload, exchange.rpc = self.session.dialect.request(
            method_of(op),
            call_params(op, self.counter, draw_size(self.sizes, op, self.ctx.rng)),
            self.session.session,
            extra,
        )
        return payload

    def judge(self, exchange: TimedExchange) -> tuple[str, str | None]:
        if self.ops[exchange.entry.name].kind is OperationKind.REQUEST:
            return super().judge(exchange)
        outcome, _, message = answer(exchange, exchange.rpc)
        return outcome, f"{exchange.entry.name}: {message}" if message else None

    def stop(self) -> None:
        super().stop()
        if self.starter is not None:
            self.starter.cancel()
