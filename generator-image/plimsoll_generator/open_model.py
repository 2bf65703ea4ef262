"""Plain-HTTP load: the open model (`rate`) and the closed loop (`users`).

Open model: requests start on the schedule whatever the answers do. Each wake-up
sends every start due within LEAD, then sleeps to the next due time minus LEAD
(at least MIN_SLEEP: no spinning on sub-millisecond timers, whose resolution is
a millisecond anyway); `pacing.Pacer` decides which starts go out and counts
them (scheduled, on time, dropped, start lag). Latency runs from min(intended start, actual send): a
late send (a stall, a full loop) counts from its intended start, as wrk2 does,
so coordinated omission cannot hide a stalled target; a send up to LEAD early
counts from the send, so it never shortens a latency. At the in-flight cap a
start is dropped and counted. The tick loop (`PacedDriver`) is the replay's too
(`replay.ReplayDriver`): only how one start is sent differs.

Closed loop: `level` users, each sending its next request as soon as the last
answer arrives (the classic closed model, and the benchmark's 64 connections).
"""

from __future__ import annotations

import asyncio
import time

from plimsoll.shared.rate_profile import of_phases
from plimsoll_generator.client import Exchange, upstream_seconds
from plimsoll_generator.context import TrialContext
from plimsoll_generator.http_mix import HttpMix, MixEntry
from plimsoll_generator.pacing import Pacer
from plimsoll_generator.recorder import FOLD_AT, OperationStats, classify
from plimsoll_generator.schedule import ProfiledSchedule, Schedule

_perf = time.perf_counter


class TimedExchange(Exchange):
    """A plain request of the open model or the closed loop. Built on the hot path, so
    every slot is set here directly (no keyword call into `Exchange.__init__`), and a
    lean one is used again once answered (`HttpDriver.spare`)."""

    __slots__ = ("entry", "record", "rpc", "start", "user")

    def __init__(
        self,
        driver: HttpDriver,
        entry: MixEntry,
        start: float,
        record: bool,
        user: int,
        sent_at: float,
    ) -> None:
        keep = driver.keep_body
        self.callback = driver.on_done
        self.body = [] if keep else None
        self.keep_headers = keep
        self.headers = {} if keep else None
        self.lean = not keep
        self.status = 0
        self.server_timing = None
        self.error = None
        self.nbytes = 0
        self.sent_at = sent_at
        self.timeout = driver.timeout
        self.conn = None
        self.entry = entry
        self.start = start
        self.record = record
        self.user = user
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
            workload.credentials,
        )
        self.stats: dict[str, OperationStats] = {
            e.name: ctx.recorder.op(e.name) for e in self.mix.entries
        }
        self.handle: asyncio.TimerHandle | None = None
        self.counter = 0
        self.keep_body = False
        # Drivers that keep the plain payload and judge (not MCP's) skip those calls.
        self.plain_payload = type(self).payload is HttpDriver.payload
        self.plain_judge = type(self).judge is HttpDriver.judge
        self.only = self.mix.entries[0] if len(self.mix.entries) == 1 else None
        self.running = True  # False once stop() is called
        self.spare: list[TimedExchange] = []  # answered lean exchanges, to be used again

    def payload(self, exchange: TimedExchange, ip_index: int) -> bytes:
        """The bytes to send (MCP overrides this to wrap the call in JSON-RPC)."""
        return self.mix.payload(exchange.entry, ip_index)

    def judge(self, exchange: TimedExchange) -> tuple[str, str | None]:
        """The outcome class of an answer, and a message when it is not ok."""
        outcome = classify(exchange.status, exchange.entry.expected, exchange.error)
        if outcome == "ok":
            return outcome, None
        return outcome, exchange.error or f"{exchange.entry.name}: HTTP {exchange.status}"

    def exchange(
        self, entry: MixEntry, start: float, record: bool, user: int, now: float
    ) -> TimedExchange:
        """A lean exchange answered earlier, set up again, or a new one: every lean one
        goes back to `spare` when answered, so the sends reuse what the answers free."""
        spare = self.spare
        if not spare:
            return TimedExchange(self, entry, start, record, user, now)
        exchange = spare.pop()
        exchange.entry = entry
        exchange.start = start
        exchange.record = record
        exchange.user = user
        exchange.sent_at = now
        exchange.status = 0
        exchange.server_timing = exchange.error = None
        return exchange

    def send(
        self, entry: MixEntry, start: float, record: bool, user: int = -1, now: float = 0.0
    ) -> None:
        """Start one request meant to begin at `start`; `now` is the clock read just
        before (0: read it at the send)."""
        ctx = self.ctx
        exchange = self.exchange(entry, start, record, user, now)
        self.counter += 1
        ctx.in_flight += 1
        if record:
            ctx.sent += 1
        payload = entry.static if self.plain_payload else None
        if payload is None:
            payload = self.payload(exchange, user if user >= 0 else self.counter)
        ctx.pool.send(payload, exchange)

    def on_done(self, exchange: Exchange) -> None:
        timed: TimedExchange = exchange  # type: ignore[assignment]  # only ours call back
        now = _perf()
        if timed.record:
            self.tally(timed, now)
        self.after_answer(timed, now)

    def tally(self, timed: TimedExchange, now: float) -> None:
        """Count one answer inside the measured window and keep its latency."""
        entry = timed.entry
        stats = self.stats[entry.name]
        error = timed.error
        ok = False
        if error is None and self.plain_judge and timed.status in entry.expected:
            stats.ok += 1  # the common answer, without the judge's call
            ok = True
        else:
            outcome, message = self.judge(timed)
            if outcome == "ok":
                stats.ok += 1
                ok = True
            else:
                self.ctx.recorder.outcome(stats, outcome, message)
        if error is None:
            elapsed = now - timed.start
            # Series.add without its call: this runs once per answer.
            buffer = stats.latency.buffer
            buffer.append(int(elapsed * 1e6))
            if len(buffer) >= FOLD_AT:
                stats.latency.fold()
            # Goodput, judged inline: one float comparison (and one more with
            # Server-Timing); OperationStats.judge is the same rule, for the slower paths.
            good = ok and elapsed <= stats.within
            timing = timed.server_timing
            if timing is not None:
                upstream = upstream_seconds(timing)
                if upstream is not None:
                    added = max(elapsed - upstream, 0.0)
                    stats.added.add(added)
                    if added > stats.added_within:
                        good = False
            if good:
                stats.good += 1

    def after_answer(self, timed: TimedExchange, now: float) -> None:
        """The answer is out of flight: its exchange is free again, and `after` runs."""
        self.ctx.in_flight -= 1
        if timed.lean:
            self.spare.append(timed)  # nothing refers to it any more: the next send reuses it
        self.after(timed, now)

    def after(self, exchange: TimedExchange, now: float) -> None:
        """What an answer sets off next: nothing in the open model."""

    def choose(self) -> MixEntry:
        return self.only or self.mix.choose(self.ctx.rng)

    def stop(self) -> None:
        self.running = False
        if self.handle is not None:
            self.handle.cancel()


class PacedDriver(HttpDriver):
    """A driver whose starts a `Pacer` times: the open model's schedule here, a replayed
    log's in `replay.ReplayDriver`. One tick loop for both, so they wake, send what is
    due, drop at the cap and stop alike; each says only how one start is sent."""

    pacer: Pacer
    loop: asyncio.AbstractEventLoop

    def pace(self, schedule: Schedule) -> None:
        """Time this trial's starts by `schedule` (called once, from `__init__`)."""
        ctx = self.ctx
        workload = ctx.request.workload
        self.pacer = Pacer(
            schedule,
            ctx,
            measure_from=ctx.measure_from - ctx.t0,
            horizon=ctx.end - ctx.t0,
            cap=workload.max_in_flight,
            tolerance=workload.late_tolerance,
        )
        self.loop = asyncio.get_running_loop()

    def start(self) -> None:
        self._tick()

    def start_due(self, offset: float, start: float, record: bool, now: float) -> None:
        """Send one start the pacer let through: `offset` is its intended time from the
        trial start (the schedule's own value), `start` where its latency counts from."""
        raise NotImplementedError

    def _tick(self) -> None:
        ctx = self.ctx
        now = _perf()
        rel = now - ctx.t0
        start_due = self.start_due
        for offset, record in self.pacer.due(rel, ctx.in_flight):
            # Each send reads the clock: an early start counts from its own send, not from
            # the wake-up, which would add the sends before it in the burst to its latency.
            sent = _perf()
            start_due(offset, min(ctx.t0 + offset, sent), record, sent)
        wake = self.pacer.next_wake(rel)
        if wake is None or ctx.stopped.is_set():
            self.handle = None
            return
        self.handle = self.loop.call_later(wake - rel, self._tick)


class OpenModel(PacedDriver):
    def __init__(self, ctx: TrialContext, rate: float) -> None:
        super().__init__(ctx)
        workload = ctx.request.workload
        if workload.profile:  # a flight (issue 57): the rate follows the profile's shares
            profile = of_phases(workload.profile)
            self.pace(ProfiledSchedule(rate, profile, workload.arrival, ctx.rng))
        else:
            self.pace(Schedule(rate, workload.arrival, ctx.rng))

    def start_due(self, offset: float, start: float, record: bool, now: float) -> None:
        self.send(self.choose(), start, record, -1, now)


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
        if now >= ctx.end or not self.running:
            return
        record = now >= ctx.measure_from
        if record:
            ctx.intended += 1
            ctx.on_time += 1  # a closed loop has no schedule to fall behind
        self.send(self.only or self.mix.choose(ctx.rng), now, record, user, now)

    def on_done(self, exchange: Exchange) -> None:
        """The user's answer, then at once its next request, on the exchange and the
        connection the answer just freed: no trip through `spare` and the pool's idle
        list (bench/generator.py: 0.55 us of Python a request less, with the lean
        connection's single callback). Errors, kept bodies and the trial's end go the
        general way (`after`)."""
        timed: TimedExchange = exchange  # type: ignore[assignment]  # only ours call back
        ctx = self.ctx
        now = _perf()
        if timed.record:
            self.tally(timed, now)
        if timed.error is not None or not timed.lean or now >= ctx.end or not self.running:
            self.after_answer(timed, now)
            return
        record = now >= ctx.measure_from
        if record:
            ctx.intended += 1
            ctx.on_time += 1  # a closed loop has no schedule to fall behind
            ctx.sent += 1
        timed.start = timed.sent_at = now
        timed.record = record
        timed.status = 0
        timed.server_timing = None
        entry = self.only or self.mix.choose(ctx.rng)
        timed.entry = entry
        payload = entry.static if self.plain_payload else None
        if payload is None:
            payload = self.payload(timed, timed.user)
        conn = timed.conn
        if conn is not None and conn.exchange is None and conn.reusable:
            conn.send(payload, timed)
        else:
            ctx.pool.send(payload, timed)

    def after(self, exchange: TimedExchange, now: float) -> None:
        if exchange.error is not None:
            # A refused or reset connection answers at once: pause instead of spinning.
            self.handle = asyncio.get_running_loop().call_later(
                0.01, self._next, exchange.user, now + 0.01
            )
            return
        self._next(exchange.user, now)
