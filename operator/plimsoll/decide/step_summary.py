"""From a full `StepResult` to the compact figures people and the search read.

The runner keeps every `StepResult` in the report; the status and the search
need only a `StepRecord` (verdict, quantiles, rates, CPU, memory). The runner
derives each step's record here once (`plimsoll.run.variant`) and the report
keeps it beside the step, so the numbers in `kubectl get`, the live view,
report.md, the charts and the comparisons are the same numbers.
"""

from __future__ import annotations

from hdrh.histogram import HdrHistogram

from plimsoll.api.spec import LatencyBound
from plimsoll.api.step import MarginalFigure, StepRecord, StepResult, Verdict
from plimsoll.api.trial import Outcomes, TrialResult
from plimsoll.decide.goodput import figures as goodput_figures
from plimsoll.shared import histogram


def merged_outcomes(client: TrialResult) -> Outcomes:
    total = Outcomes()
    for operation in client.operations.values():
        total = total + operation.outcomes
    return total


def floor_ms(client: TrialResult | None, quantile: float) -> float | None:
    """The direct-call floor at `quantile`, in milliseconds (None: no samples)."""
    if client is None or client.floor is None or not client.floor.latency:
        return None
    return histogram.quantile_ms(histogram.merge([client.floor.latency]), quantile)


def added_ms(client: TrialResult | None, quantile: float) -> float | None:
    """A quantile of the added latency (client time minus the upstream's Server-Timing)
    over every operation that measured one; None when none did."""
    if client is None:
        return None
    encoded = [op.added for op in client.operations.values() if op.added is not None]
    if not encoded:
        return None
    return histogram.quantile_ms(histogram.merge(encoded), quantile)


def bound_histogram(client: TrialResult, bound: LatencyBound) -> HdrHistogram:
    """The latency a bound judges: its metric (total, ttft or added) of its operation, or of
    every operation merged for '*'. The verdict judges this and the HTML report draws it, so
    a chart's bar is never held against another operation's or metric's figures."""
    if bound.operation == "*":
        parts = list(client.operations.values())
    else:
        found = client.operations.get(bound.operation)
        parts = [found] if found is not None else []
    field = "latency" if bound.metric == "total" else bound.metric
    return histogram.merge(getattr(part, field) for part in parts)


def bound_ms(client: TrialResult | None, bound: LatencyBound) -> float | None:
    """The bound's quantile of what it judges, in milliseconds (None: nothing answered)."""
    if client is None:
        return None
    return histogram.quantile_ms(bound_histogram(client, bound), bound.quantile)


def error_rate(client: TrialResult | None) -> float | None:
    """Transport and unexpected answers as a share of all attempts."""
    if client is None:
        return None
    outcomes = merged_outcomes(client)
    if outcomes.total == 0:
        return None
    return (outcomes.transport + outcomes.unexpected) / outcomes.total


def record_of(result: StepResult) -> StepRecord:
    """The `StepRecord` for `status.steps` and the search, derived from a full result."""
    client = result.client
    target = result.target
    # Every operation's histograms merged once, read at each quantile.
    latency = (
        histogram.merge(op.latency for op in client.operations.values())
        if client is not None
        else None
    )

    def at(quantile: float) -> float | None:
        return histogram.quantile_ms(latency, quantile) if latency is not None else None

    good = goodput_figures(client)

    return StepRecord(
        index=result.index,
        level=result.level,
        variant=result.variant,
        kind=result.kind,
        attempt=result.attempt,
        duration=result.duration,
        verdict=result.judgement.verdict,
        reasons=list(result.judgement.reasons),
        p50_ms=at(0.50),
        p95_ms=at(0.95),
        p99_ms=at(0.99),
        added_p99_ms=added_ms(client, 0.99),
        error_rate=error_rate(client),
        achieved_rate=client.achieved_rate if client is not None else None,
        goodput=good.per_second if good is not None else None,
        attainment=good.attainment if good is not None else None,
        attainment_low=good.low if good is not None else None,
        attainment_high=good.high if good is not None else None,
        cpu_cores=target.cpu_mean_cores if target is not None else None,
        throttled_ratio=target.throttled_ratio if target is not None else None,
        memory_bytes=target.memory_max_bytes if target is not None else None,
        started_at=result.started_at,
        floor_ms=result.contention.floor_ms if result.contention is not None else None,
        busy=result.contention.busy if result.contention is not None else False,
        nominal=client.nominal if client is not None else None,
        scheduled=client.intended if client is not None else None,
        sent_on_time=client.sent_on_time if client is not None else None,
        generators=client.generators if client is not None else None,
        generator_cores=(
            client.cpu_seconds / client.measured_seconds
            if client is not None and client.measured_seconds > 0
            else None
        ),
        generator_peak_cpu=client.peak_cpu_fraction if client is not None else None,
        marginal=_marginal(result),
    )


def _marginal(result: StepResult) -> MarginalFigure | None:
    """The first criterion a marginal step could not decide, as a typed figure."""
    if result.judgement.verdict is not Verdict.MARGINAL:
        return None
    for criterion in result.judgement.criteria:
        if criterion.marginal and criterion.measured is not None:
            return MarginalFigure(
                criterion=criterion.name,
                measured=criterion.measured,
                bound=criterion.bound,
                unit=criterion.unit,
            )
    return None
