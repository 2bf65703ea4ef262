"""The calibration accumulator: fed one log record at a time, it returns the whole fit.

Called by `plimsoll calibrate` (plimsoll.cli.calibrate) for every record that
passed its time filter. Memory is bounded per route and per client: samples
are reservoirs; a client keeps only its call starts (8 bytes each) so its gaps
can be taken in start order (a proxy logs requests as they end, not as they
begin).
"""

from __future__ import annotations

import itertools
import math
import random
from array import array
from collections import Counter
from dataclasses import dataclass, field

from plimsoll.decide.calibration.cohort import fit_cohort
from plimsoll.decide.calibration.fit import ArrivalFit, CalibrationFit, RouteFit, UsersFit
from plimsoll.decide.calibration.gaps import Gap, burst_sizes, fit_gaps
from plimsoll.decide.calibration.latency import fit_latency
from plimsoll.decide.calibration.reservoir import Reservoir, quantile
from plimsoll.decide.calibration.responses import ResponseTally, size_buckets
from plimsoll.decide.calibration.routes import RoutePatterns, operation_name
from plimsoll.shared.accesslog import LogRecord

GAP_SAMPLE = 20_000  # EM over more gaps costs time and changes nothing visible
EXAMPLE_PATHS = 1_000  # distinct concrete paths remembered per route
PEAK_WINDOW = 60.0
# A call that starts within this of the previous one's end (not before: overlapping calls
# did not wait) followed it at once: the
# user meant a shorter gap (logs keep milliseconds; 5 of them absorb the rounding).
CENSOR_WINDOW = 0.005
CALL_METHOD = "tools/call"


def _keep(sample: list[Gap], seen: int, rng: random.Random, item: Gap) -> int:
    """Algorithm R: `sample` stays a uniform sample of GAP_SAMPLE of the `seen + 1` gaps
    offered so far; returns the new count."""
    seen += 1
    if len(sample) < GAP_SAMPLE:
        sample.append(item)
    elif (slot := rng.randrange(seen)) < GAP_SAMPLE:
        sample[slot] = item
    return seen


@dataclass
class _RouteTally:
    method: str
    route: str
    requests: int = 0
    paths: Counter[str] = field(default_factory=Counter)
    upstream: Reservoir = field(default_factory=lambda: Reservoir(100_000, seed=2))
    durations: Reservoir = field(default_factory=lambda: Reservoir(100_000, seed=3))
    responses: ResponseTally = field(default_factory=ResponseTally)


@dataclass
class _Client:
    mcp_calls: array[float] = field(default_factory=lambda: array("d"))
    mcp_ends: array[float] = field(default_factory=lambda: array("d"))
    others: array[float] = field(default_factory=lambda: array("d"))  # not MCP calls
    other_ends: array[float] = field(default_factory=lambda: array("d"))
    requests: int = 0
    last_window: int = -1


class TrafficFit:
    """Accumulates records; `result()` fits them."""

    def __init__(
        self,
        patterns: RoutePatterns,
        *,
        mcp_path: str = "/mcp",
        session_gap: float = 1800.0,
        bot_share: float | None = None,
    ) -> None:
        self.patterns = patterns
        self.mcp_path = mcp_path
        self.session_gap = session_gap
        self.bot_share = bot_share
        self.routes: dict[tuple[str, str], _RouteTally] = {}
        self.clients: dict[str, _Client] = {}
        self.mcp_calls = 0
        self.stream_opens = 0
        self.page_views = 0
        self.named_methods = 0  # MCP requests that name their JSON-RPC method (Mcp-Method)
        self.records = 0
        self.first = math.inf
        self.last = -math.inf
        self.per_second: Counter[int] = Counter()
        self.clients_per_window: Counter[int] = Counter()

    def add(self, record: LogRecord) -> None:
        self.records += 1
        self.first = min(self.first, record.start)
        self.last = max(self.last, record.start)
        route = self.patterns.group(record.path)
        operation = record.operation
        self.named_methods += operation is not None
        rpc_call = operation is None or operation == CALL_METHOD
        if not rpc_call:
            route = f"{route}#{operation}"  # an MCP listing or handshake is not a tool call
        key = (record.method, route)
        tally = self.routes.get(key)
        if tally is None:
            tally = self.routes[key] = _RouteTally(record.method, route)
        tally.requests += 1
        if record.path in tally.paths or len(tally.paths) < EXAMPLE_PATHS:
            tally.paths[record.path] += 1
        if record.upstream is not None:
            tally.upstream.add(record.upstream)
        if record.duration is not None:
            tally.durations.add(record.duration)
        tally.responses.add(record.status, record.bytes_sent, record.timed_out)
        client = self.clients.get(record.client)
        if client is None:
            client = self.clients[record.client] = _Client()
        client.requests += 1
        on_mcp = record.path == self.mcp_path
        if on_mcp and record.method == "POST" and not rpc_call:
            pass  # a handshake or a listing: neither a call nor a page
        elif on_mcp and record.method == "POST":
            self.mcp_calls += 1
        elif on_mcp and record.method == "GET":
            self.stream_opens += 1
        elif record.method == "GET":
            self.page_views += 1
        if on_mcp and record.method == "POST":
            if rpc_call:
                client.mcp_calls.append(record.start)
                client.mcp_ends.append(record.start + (record.duration or 0.0))
        elif not on_mcp:
            client.others.append(record.start)
            client.other_ends.append(record.start + (record.duration or 0.0))
        second = int(record.start)
        self.per_second[second] += 1
        window = int(record.start // PEAK_WINDOW)
        if window != client.last_window:
            client.last_window = window
            self.clients_per_window[window] += 1

    @property
    def mcp(self) -> bool:
        return self.mcp_calls > 0 and self.mcp_calls >= 0.5 * (self.records - self.stream_opens)

    def result(self) -> CalibrationFit:
        if self.records == 0:
            raise ValueError("the log holds no requests (check --since/--until and --format)")
        routes = self._routes()
        users, problem = self._users()
        return CalibrationFit(
            records=self.records,
            clients=len(self.clients),
            first=self.first,
            last=self.last,
            mcp=self.mcp,
            mcp_path=self.mcp_path,
            mcp_stateless=self.named_methods > 0,
            routes=routes,
            users=users,
            users_problem=problem,
            arrivals=self._arrivals(),
        )

    def _routes(self) -> list[RouteFit]:
        out: list[RouteFit] = []
        names: set[str] = set()
        for tally in sorted(self.routes.values(), key=lambda t: t.requests, reverse=True):
            if tally.upstream.values:
                latency = fit_latency(tally.upstream.values, "upstream time")
            elif tally.durations.values:
                latency = fit_latency(tally.durations.values, "request time")
            else:
                latency = None
            name = operation_name(tally.method, tally.route)
            if name in names:  # '/a-b' and '/a/b' spell the same name: number the later
                name = f"{name}-{len(out)}"
            names.add(name)
            out.append(
                RouteFit(
                    name=name,
                    method=tally.method,
                    route=tally.route,
                    example_path=tally.paths.most_common(1)[0][0],
                    requests=tally.requests,
                    weight=tally.requests / self.records,
                    latency=latency,
                    errors=tally.responses.errors(),
                    sizes=size_buckets(tally.responses.sizes.values),
                )
            )
        return out

    def _calls(self, client: _Client) -> list[tuple[float, float]]:
        """A client's calls (start, end) in start order: its MCP calls on an MCP server's log
        (a held stream or a page view is not a call), every request otherwise."""
        calls = list(zip(client.mcp_calls, client.mcp_ends, strict=True))
        if not self.mcp:
            calls += zip(client.others, client.other_ends, strict=True)
        return sorted(calls)

    def _users(self) -> tuple[UsersFit | None, str | None]:
        calls_of = {cid: self._calls(c) for cid, c in self.clients.items()}
        starts = {cid: [start for start, _ in calls] for cid, calls in calls_of.items()}
        cohort = fit_cohort({cid: len(s) for cid, s in starts.items()}, self.bot_share)
        sample: list[Gap] = []
        seen = 0
        rng = random.Random(4)
        sessions = 0
        session_seconds = 0.0
        multi = 0
        bot_active = 0.0
        for cid, calls in starts.items():
            spans = _sessions(calls, self.session_gap)
            sessions += len(spans)
            session_seconds += sum(end - begin for begin, end in spans)
            multi += len(spans) > 1
            if cid in cohort.bots:
                bot_active += sum(end - begin for begin, end in spans)
                continue
            for (before, ended), (after, _) in itertools.pairwise(calls_of[cid]):
                gap = after - before
                if not 0 < gap <= self.session_gap:
                    continue
                seen = _keep(
                    sample, seen, rng, Gap(gap, censored=abs(after - ended) <= CENSOR_WINDOW)
                )
            still_open = self.last - calls[-1] if calls else 0.0
            if 0 < still_open <= self.session_gap:  # the gap the log's end cut (gaps.py)
                seen = _keep(sample, seen, rng, Gap(still_open, beyond=True))
        try:
            gaps = fit_gaps(sample)
        except ValueError as exc:
            return None, str(exc)
        bursts = sorted(
            size
            for cid, calls in starts.items()
            if cid not in cohort.bots
            for size in burst_sizes(calls, gaps.threshold)
        )
        clients = max(len(starts), 1)
        calls_total = max(sum(len(s) for s in starts.values()), 1)
        return (
            UsersFit(
                gaps=gaps,
                cohort=cohort,
                bot_rate=cohort.bot_calls / bot_active if bot_active > 0 else 0.0,
                burst_size_mean=sum(bursts) / len(bursts) if bursts else 0.0,
                burst_size_p50=quantile([float(b) for b in bursts], 0.5) if bursts else 0.0,
                burst_size_p90=quantile([float(b) for b in bursts], 0.9) if bursts else 0.0,
                sessions_per_client=sessions / clients,
                session_seconds_mean=session_seconds / max(sessions, 1),
                multi_session_clients=multi,
                page_view_fraction=self.page_views / calls_total if self.mcp else 0.0,
                holds_stream=self.stream_opens > 0,
            ),
            None,
        )

    def _arrivals(self) -> ArrivalFit:
        span = self.last - self.first
        window = PEAK_WINDOW if span >= 10 * PEAK_WINDOW else 1.0
        buckets: Counter[int] = Counter()
        for second, count in self.per_second.items():
            buckets[int(second // window)] += count
        busy = len(buckets)  # windows with traffic: idle stretches do not dilute the mean
        mean_rate = self.records / (busy * window)
        peak_bucket, peak_count = max(buckets.items(), key=lambda item: item[1])
        peak_rate = peak_count / window
        return ArrivalFit(
            window=window,
            mean_rate=mean_rate,
            peak_rate=peak_rate,
            peak_at=peak_bucket * window,
            peak_to_mean=peak_rate / mean_rate if mean_rate > 0 else 1.0,
            peak_clients=max(self.clients_per_window.values(), default=0),
        )


def _sessions(starts: list[float], gap: float) -> list[tuple[float, float]]:
    """A client's sessions: its sorted starts split where it was idle longer than `gap`."""
    if not starts:
        return []
    spans = []
    begin = previous = starts[0]
    for start in starts[1:]:
        if start - previous > gap:
            spans.append((begin, previous))
            begin = start
        previous = start
    spans.append((begin, previous))
    return spans
