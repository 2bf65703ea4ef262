"""Recording what a trial measured, per operation, into the wire result.

Every workload reports to one `Recorder`: latencies (seconds) into per-operation
buffers folded into HdrHistograms (appending an int is ten times cheaper than
`record_value`, which matters at 100,000 requests per second), outcomes by
class, and a bounded sample of error messages. `classify` is the single place
that decides which class an answer belongs to.

Goodput is judged here, answer by answer: each operation's stats hold the latency
bounds that cover it (`TrialRequest.request_bounds`: its own and '*', the strictest
per metric), and an answer of the expected class within all of them counts as good.
Where it is judged cheaply matters, so the drivers compare inline (`good`), and an
operation with no bound compares against infinity.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from hdrh.histogram import HdrHistogram

from plimsoll.api.trial import OperationResult, Outcomes, RequestBound
from plimsoll.shared import histogram

FOLD_AT = 65_536
_MAX_ERRORS = 20
SHED_STATUSES = frozenset({429, 503})


class Series:
    """Latency samples in microseconds, buffered then folded into a histogram, and into
    `also` (the current timeline slice's, shared by every operation) when there is one.

    With `also`, a fold records each distinct value once, into `part`, and adds `part`
    to both histograms with hdrh's array addition (C): recording into both costs two
    pure-Python `record_value` calls per distinct value (1.6 ms for a slice of 5,000
    answers, 677 distinct values, measured), and the fold runs on the event loop."""

    __slots__ = ("also", "buffer", "histogram", "part")

    def __init__(self, also: HdrHistogram | None = None) -> None:
        self.buffer: list[int] = []
        self.histogram: HdrHistogram = histogram.new_histogram()
        self.also = also
        self.part: HdrHistogram | None = histogram.new_histogram() if also is not None else None

    def add(self, seconds: float) -> None:
        buffer = self.buffer
        buffer.append(int(seconds * 1e6))
        if len(buffer) >= FOLD_AT:
            self.fold()

    def fold(self) -> None:
        if not self.buffer:
            return
        part = self.part
        into = self.histogram if part is None else part
        record = into.record_value
        for micros, n in Counter(self.buffer).items():
            record(histogram.clamped_us(micros), n)
        self.buffer.clear()
        if part is not None and self.also is not None:
            self.histogram.add(part)
            self.also.add(part)
            histogram.clear(part)

    def encoded(self) -> str:
        self.fold()
        return histogram.encode(self.histogram)

    def count(self) -> int:
        return int(self.histogram.get_total_count()) + len(self.buffer)


class OperationStats:
    __slots__ = (
        "added",
        "added_within",
        "application",
        "good",
        "latency",
        "ok",
        "shed",
        "transport",
        "ttft",
        "ttft_within",
        "unexpected",
        "within",
    )

    def __init__(
        self,
        slice_latency: HdrHistogram | None = None,
        bounds: Sequence[RequestBound] = (),
        name: str = "",
    ) -> None:
        self.latency = Series(slice_latency)
        self.added = Series()
        self.ttft = Series()
        self.ok = self.application = self.transport = self.unexpected = self.shed = 0
        self.good = 0
        self.within = _within(bounds, name, "total")
        self.ttft_within = _within(bounds, name, "ttft")
        self.added_within = _within(bounds, name, "added")

    def timed(self, elapsed: float, upstream: float | None, ok: bool = False) -> None:
        """One answered call's latency and, when the answer carried the upstream's
        Server-Timing, what came on top of it (the target's added latency); `ok`: it
        was of the expected class, so it is judged for goodput."""
        self.latency.add(elapsed)
        added = -1.0
        if upstream is not None:
            added = max(elapsed - upstream, 0.0)
            self.added.add(added)
        if ok:
            self.judge(elapsed, -1.0, added)

    def judge(self, elapsed: float, ttft: float, added: float) -> None:
        """Count one answer of the expected class as good if it kept every bound; a
        negative `ttft` or `added` was not measured, so no bound on it judges it."""
        if elapsed > self.within:
            return
        if ttft >= 0.0 and ttft > self.ttft_within:
            return
        if added >= 0.0 and added > self.added_within:
            return
        self.good += 1

    def result(self) -> OperationResult:
        return OperationResult(
            latency=self.latency.encoded(),
            added=self.added.encoded() if self.added.count() else None,
            ttft=self.ttft.encoded() if self.ttft.count() else None,
            outcomes=Outcomes(
                ok=self.ok,
                application=self.application,
                transport=self.transport,
                unexpected=self.unexpected,
                shed=self.shed,
            ),
            good=self.good,
        )


def _within(bounds: Sequence[RequestBound], name: str, metric: str) -> float:
    """The strictest bound on `metric` covering operation `name`, in seconds; infinity
    when none does."""
    covering = [b.within for b in bounds if b.metric == metric and b.operation in ("*", name)]
    return min(covering, default=math.inf)


class Recorder:
    """Per-operation statistics of one worker process, for the measured window."""

    def __init__(self, names: list[str], bounds: Sequence[RequestBound] = ()) -> None:
        # The latency of every operation answered in the current timeline slice; the
        # timeline (`plimsoll_generator.timeline`) reads and resets it at each cut.
        self.slice_latency: HdrHistogram = histogram.new_histogram()
        self.bounds = list(bounds)
        self.ops: dict[str, OperationStats] = {
            name: OperationStats(self.slice_latency, self.bounds, name) for name in names
        }
        self.errors: list[str] = []
        self.recording = False  # off during the warm-up

    def op(self, name: str) -> OperationStats:
        stats = self.ops.get(name)
        if stats is None:
            stats = self.ops[name] = OperationStats(self.slice_latency, self.bounds, name)
        return stats

    def error(self, message: str) -> None:
        if len(self.errors) < _MAX_ERRORS and message not in self.errors:
            self.errors.append(message)

    def outcome(self, stats: OperationStats, outcome: str, message: str | None = None) -> None:
        if outcome == "ok":
            stats.ok += 1
        elif outcome == "application":
            stats.application += 1
        elif outcome == "transport":
            stats.transport += 1
        elif outcome == "shed":
            stats.shed += 1
        else:
            stats.unexpected += 1
        if message is not None and outcome != "ok":
            self.error(message)

    def totals(self) -> tuple[int, int]:
        """Answers of the expected class and errors so far, over every operation."""
        ok = errors = 0
        for stats in self.ops.values():
            ok += stats.ok
            errors += stats.application + stats.transport + stats.unexpected + stats.shed
        return ok, errors

    def fold(self) -> None:
        """Every operation's buffered latencies into its histograms (and the slice's)."""
        for stats in self.ops.values():
            stats.latency.fold()

    def results(self) -> dict[str, OperationResult]:
        return {name: stats.result() for name, stats in self.ops.items()}


def classify(status: int, expected: frozenset[int] | list[int], error: str | None) -> str:
    """The outcome class of one answer: ok, transport, shed or unexpected."""
    if error is not None:
        return "transport"
    if status in expected:
        return "ok"
    if status in SHED_STATUSES:
        return "shed"
    return "unexpected"
