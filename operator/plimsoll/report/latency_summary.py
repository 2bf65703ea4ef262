"""Per step and operation: the run summary a benchmark prints (the LLM-proxy seed's).

Requests, the share that succeeded, the measured seconds and the throughput, and the
total latency's mean, minimum and maximum beside p50, p95 and p99. The steps table keeps
to what the verdict reads (a quantile, errors, achieved per second); this table is what
a reader compares with another tool's summary line. Mean, minimum and maximum come from
the same HdrHistogram as the quantiles, so they share its 0.1% resolution.
"""

from __future__ import annotations

from plimsoll.api.step import StepResult
from plimsoll.api.trial import OperationResult
from plimsoll.shared.histogram import decode, quantile_ms

SUMMARY_COLUMNS = [
    "#",
    "variant",
    "level",
    "operation",
    "requests",
    "succeeded",
    "seconds",
    "per s",
    "mean ms",
    "min ms",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def _latency_cells(operation: OperationResult) -> list[str]:
    histogram = decode(operation.latency)
    if histogram.get_total_count() == 0:
        return ["—"] * 6
    return [
        _ms(histogram.get_mean_value() / 1000),
        _ms(histogram.get_min_value() / 1000),
        _ms(quantile_ms(histogram, 0.50)),
        _ms(quantile_ms(histogram, 0.95)),
        _ms(quantile_ms(histogram, 0.99)),
        _ms(histogram.get_max_value() / 1000),
    ]


def summary_rows(result: StepResult) -> list[list[str]]:
    """One row per operation the step's client measured; none without a client."""
    client = result.client
    if client is None:
        return []
    seconds = client.measured_seconds
    rows = []
    for name, operation in sorted(client.operations.items()):
        total = operation.outcomes.total
        succeeded = f"{operation.outcomes.ok / total:.2%}" if total else "—"
        rate = f"{total / seconds:,.1f}" if seconds > 0 else "—"
        rows.append(
            [
                str(result.index),
                result.variant,
                f"{result.level:,}",
                name,
                f"{total:,}",
                succeeded,
                f"{seconds:,.1f}" if seconds > 0 else "—",
                rate,
                *_latency_cells(operation),
            ]
        )
    return rows
