"""The latency a bar's bound judges, read from a step's histograms: its operation, metric
and quantile.

The step table's p50/p95/p99 merge every operation's total latency; a bar may judge the
time to first token of one operation at p95. The compact summary (`plimsoll run`'s end)
shows the figures the bar judged, so it reads them the way the verdict does: the named
operation's (or all of them merged), of the named metric, at the bound's quantile.
Pure.
"""

from __future__ import annotations

from plimsoll.api.spec import LatencyBound
from plimsoll.api.trial import TrialResult
from plimsoll.api.units import format_quantile
from plimsoll.shared import histogram


def judged_ms(client: TrialResult | None, bound: LatencyBound) -> float | None:
    """The bound's quantile of its metric over its operation(s), in ms; None without samples."""
    if client is None:
        return None
    parts = (
        list(client.operations.values())
        if bound.operation == "*"
        else [client.operations[bound.operation]]
        if bound.operation in client.operations
        else []
    )
    field = "latency" if bound.metric == "total" else bound.metric
    return histogram.quantile_ms(
        histogram.merge(getattr(part, field) for part in parts), bound.quantile
    )


def label(bound: LatencyBound) -> str:
    """A short column heading: 'p95 ms', 'p95 ttft ms', 'chat p99 ms'."""
    metric = "" if bound.metric == "total" else f" {bound.metric}"
    operation = "" if bound.operation == "*" else f"{bound.operation} "
    return f"{operation}{format_quantile(bound.quantile)}{metric} ms"
