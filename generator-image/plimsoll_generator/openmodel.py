"""Plain-HTTP load: the open model (`rate`) and the closed loop (`users`).

Open model: requests start on the schedule whatever the answers do. Each wake-up
sends every start due within LEAD, then sleeps to the next due time minus LEAD
(at least MIN_SLEEP: no spinning on sub-millisecond timers, whose resolution is
a millisecond anyway); `pacing.Pacer` decides which starts go out and counts
them (scheduled, on time, dropped, start lag). Latency runs from min(intended start, actual send): a
late send (a stall, a full loop) counts from its intended start, as wrk2 does,
so coordinated omission cannot hide a stalled target; a send up to LEAD early
counts from the send, so it never shortens a latency. At the in-flight cap a
start is dropped and counted.

Closed loop: `level` users, each sending its next request as soon as the last
answer arrives (the classic closed model, and the benchmark's 64 connections).
"""

from __future__ import annotations

import asyncio
import time

from plimsoll_generator.client import Exchange, upstream_seconds
from plimsoll_generator.context import TrialContext
from plimsoll_generator.httpmix import HttpMix, MixEntry
from plimsoll_generator.pacing import Pacer
from plimsoll_generator.recorder import OperationStats, classify
from plimsoll_generator.schedule import Schedule

_perf = time.perf_counter


class TimedExchange(Exchange):
    __slots__ = ("entry", "record", "rpc", "start", "user")

    def __init__(self, driver: HttpDriver, entry: MixEntry, start: float, record: bool) -> None:
        super().__init__(
            driver.on_done,
            keep_body=driver.keep_body,
            keep_headers=driver.keep_body,
            timeout=driver.timeout,
        )
        self.entry = entry
        self.start = start
        self.record = record
        self.user = -1
        self.rpc = -1


class HttpDriver:
    def __init__(self, ctx: TrialContext) -> None:
        self.ctx = ctx
        workload = ctx.request.workload
        self.timeout = workload.timeout
        self.mix = HttpMix(
            workload.mix,
            ctx.host_header,
            {op.name: ctx.path(op.path) for op in workload.mix},
            ctx.ips,
            ctx.rng,
        )
        self.stats: dict[str, OperationStats] = {
            e.name: ctx.recorder.op(e.name) for e in self.mix.entries
        }
        self.handle: asyncio.TimerHandle | None = None
        self.counter = 0
        self.keep_body = False

    def payload(self, exchange: TimedExchange, ip_index: int) -> bytes:
        """The bytes to send (MCP overrides this to wrap the call in JSON-RPC)."""
        return self.mix.payload(exchange.entry, ip_index)

    def judge(self, exchange: TimedExchange) -> tuple[str, str | None]:
        """The outcome class of an answer, and a message when it is not ok."""
        outcome = classify(exchange.status, exchange.entry.expected, exchange.error)
        if outcome == "ok":
            return outcome, None
        return outcome, exchange.error or f"{exchange.entry.name}: HTTP {exchange.status}"

    def send(self, entry: MixEntry, start: float, record: bool, user: int = -1) -> None:
        ctx = self.ctx
        exchange = TimedExchange(self, entry, start, record)
        exchange.user = user
        self.counter += 1
        ctx.in_flight += 1
        if record:
            ctx.sent += 1
        ctx.pool.send(self.payload(exchange, user if user >= 0 else self.counter), exchange)

    def on_done(self, exchange: Exchange) -> None:
        assert isinstance(exchange, TimedExchange)
        ctx = self.ctx
        ctx.in_flight -= 1
        now = _perf()
        if exchange.record:
            elapsed = now - exchange.start
            stats = self.stats[exchange.entry.name]
            outcome, message = self.judge(exchange)
            if outcome == "ok":
                stats.ok += 1
            else:
                ctx.recorder.outcome(stats, outcome, message)
            if exchange.error is None:
                stats.latency.add(elapsed)
                timing = exchange.server_timing
                if timing is not None:
                    upstream = upstream_seconds(timing)
                    if upstream is not None:
                        stats.added.add(max(elapsed - upstream, 0.0))
        self.after(exchange, now)

    def after(self, exchange: TimedExchange, now: float) -> None:
        """What an answer sets off next: nothing in the open model."""

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.cancel()


class OpenModel(HttpDriver):
    def __init__(self, ctx: TrialContext, rate: float) -> None:
        super().__init__(ctx)
        workload = ctx.request.workload
        self.pacer = Pacer(
            Schedule(rate, workload.arrival, ctx.rng),
            ctx,
            measure_from=ctx.measure_from - ctx.t0,
            horizon=ctx.end - ctx.t0,
            cap=workload.max_in_flight,
            tolerance=workload.late_tolerance,
        )
        self.loop = asyncio.get_running_loop()

    def start(self) -> None:
        self._tick()

    def _tick(self) -> None:
        ctx = self.ctx
        now = _perf()
        rel = now - ctx.t0
        for offset, record in self.pacer.due(rel, ctx.in_flight):
            self.send(self.mix.choose(ctx.rng), min(ctx.t0 + offset, now), record)
        wake = self.pacer.next_wake(rel)
        if wake is None or ctx.stopped.is_set():
            self.handle = None
            return
        self.handle = self.loop.call_later(wake - rel, self._tick)


class ClosedLoop(HttpDriver):
    """`users` chains: each answer immediately starts that user's next request."""

    def __init__(self, ctx: TrialContext, users: int) -> None:
        super().__init__(ctx)
        self.users = users

    def start(self) -> None:
        now = _perf()
        for user in range(self.users):
            self._next(user + self.ctx.request.first_user, now)

    def _next(self, user: int, now: float) -> None:
        ctx = self.ctx
        if now >= ctx.end or ctx.stopped.is_set():
            return
        record = now >= ctx.measure_from
        if record:
            ctx.intended += 1
            ctx.on_time += 1  # a closed loop has no schedule to fall behind
        self.send(self.mix.choose(ctx.rng), now, record, user)

    def after(self, exchange: TimedExchange, now: float) -> None:
        if exchange.error is not None:
            # A refused or reset connection answers at once: pause instead of spinning.
            self.handle = asyncio.get_running_loop().call_later(
                0.01, self._next, exchange.user, now + 0.01
            )
            return
        self._next(exchange.user, now)
