"""The bar's criteria for one step, each with its measured value, its bound, its
confidence interval where the samples give one, and its sentence: latency quantiles,
error and shed shares, the achieved share of the schedule, goodput, healthy streams,
restarts, the user's PromQL, and the direct-call floor. The verdict (`verdict.py`)
decides from them; nothing here decides pass or fail of the step.

The achieved share is sent-on-time ÷ scheduled: the starts the generators' own
schedule put inside the measured window, and how many of them left within the
workload's late tolerance. It judges what the generators control, so the variance of
a Poisson draw (about 2.6% over 15 s at 100/s) can never fail a step.

Bounds are inclusive: a p99 bound of 10 ms passes at 10 ms, as capacity budgets are
"within BUDGET_MS". Latencies are compared in milliseconds, shares as fractions.
"""

from __future__ import annotations

import operator

from hdrh.histogram import HdrHistogram

from plimsoll.api.spec import LatencyBound, Noise, PassWhen
from plimsoll.api.step import Criterion, CriterionKind
from plimsoll.api.trial import Outcomes, TrialResult
from plimsoll.decide.confidence import (
    quantile_interval,
    share_interval,
    share_straddles,
    straddles,
)
from plimsoll.decide.goodput import criterion as goodput_criterion
from plimsoll.decide.step_input import StepInput
from plimsoll.decide.step_summary import bound_histogram, floor_ms
from plimsoll.shared import histogram

ACHIEVED = "achieved share of schedule"


def criteria_of(result: StepInput, client: TrialResult, bar: PassWhen) -> list[Criterion]:
    """Every criterion of `bar` this step can be judged on, in the bar's order."""
    criteria = [_latency(client, bound) for bound in bar.latency]
    criteria += _shares(client, bar)
    achieved = client.achieved_share
    if achieved is not None:
        ok = achieved >= bar.min_achieved
        criteria.append(
            Criterion(
                name=ACHIEVED,
                kind=CriterionKind.ACHIEVED,
                measured=achieved,
                bound=bar.min_achieved,
                ok=ok,
            )
        )
    if bar.goodput is not None:
        criteria.append(goodput_criterion(client, bar.goodput))
    streams = client.streams
    if bar.healthy_streams and streams.opened + streams.failed_to_open > 0:
        unhealthy = streams.failed_to_open + streams.dropped + streams.missed_keep_alives
        criteria.append(_none_allowed("unhealthy streams", unhealthy))
    if result.target is not None:
        crashes = result.target.restarts + result.target.oom_kills
        criteria.append(_none_allowed("target restarts and OOM kills", crashes))
    return criteria + _promql(result, bar)


def _none_allowed(name: str, count: int) -> Criterion:
    return Criterion(name=name, kind=CriterionKind.COUNT, measured=count, bound=0, ok=count == 0)


def _shares(client: TrialResult, bar: PassWhen) -> list[Criterion]:
    """The errors of each kind and the shed answers, as shares of every request."""
    outcomes = Outcomes()
    for operation in client.operations.values():
        outcomes = outcomes + operation.outcomes
    total = outcomes.total
    shares = {
        "transport": (outcomes.transport, bar.errors.transport),
        "application": (outcomes.application, bar.errors.application),
        "unexpected": (outcomes.unexpected, bar.errors.unexpected),
        "shed": (outcomes.shed, bar.max_shed),
    }
    criteria = []
    for name, (count, bound) in shares.items():
        measured = count / total if total else None
        interval = share_interval(count, total)
        criteria.append(
            Criterion(
                name="shed answers" if name == "shed" else f"{name} errors",
                kind=CriterionKind.SHARE,
                measured=measured,
                bound=bound,
                ok=measured is not None and measured <= bound,
                low=interval.low if interval else None,
                high=interval.high if interval else None,
                samples=total,
                marginal=share_straddles(count, total, bound),
            )
        )
    return criteria


def _promql(result: StepInput, bar: PassWhen) -> list[Criterion]:
    """Each PromQL bound the step has a value for (a missing one is already invalid)."""
    criteria = []
    for promql in bar.promql:
        value = result.promql.get(promql.name)
        if value is None:
            continue  # already invalid, naming the query
        limits = (
            (CriterionKind.AT_MOST, promql.below, operator.le),
            (CriterionKind.AT_LEAST, promql.above, operator.ge),
        )
        for kind, limit, holds in limits:
            if limit is not None:
                criteria.append(
                    Criterion(
                        name=f"{promql.name} {kind.value}",
                        kind=kind,
                        measured=value,
                        bound=limit,
                        ok=holds(value, limit),
                    )
                )
    return criteria


def _latency(client: TrialResult, bound: LatencyBound) -> Criterion:
    merged: HdrHistogram = bound_histogram(client, bound)
    measured = histogram.quantile_ms(merged, bound.quantile)
    limit = bound.below * 1000.0
    operation = "all operations" if bound.operation == "*" else bound.operation
    name = f"p{bound.quantile * 100:g} {bound.metric} latency of {operation}"
    ok = measured is not None and measured <= limit
    samples = histogram.count(merged)
    interval = quantile_interval(
        bound.quantile, samples, lambda q: histogram.quantile_ms(merged, q)
    )
    return Criterion(
        name=name,
        kind=CriterionKind.LATENCY,
        quantile=f"p{bound.quantile * 100:g}",
        measured=measured,
        bound=limit,
        unit="ms",
        ok=ok,
        low=interval.low if interval else None,
        high=interval.high if interval else None,
        samples=samples,
        marginal=straddles(interval, limit),
    )


def floor_criterion(result: StepInput, client: TrialResult, noise: Noise) -> Criterion | None:
    if noise.floor_bound is None:
        return None
    # The contention figures already hold the floor at this quantile: decode it only
    # when the step was judged without them.
    contention = result.contention
    measured = (
        contention.floor_ms if contention is not None else floor_ms(client, noise.floor_quantile)
    )
    limit = noise.floor_bound * 1000.0
    quantile = f"p{noise.floor_quantile * 100:g}"
    ok = measured is not None and measured <= limit
    return Criterion(
        name=f"{quantile} direct-call floor",
        kind=CriterionKind.FLOOR,
        quantile=quantile,
        measured=measured,
        bound=limit,
        unit="ms",
        ok=ok,
    )


# The kinds shown as percentages, and those whose measure must reach the bound.
_SHARES = frozenset({CriterionKind.SHARE, CriterionKind.ACHIEVED, CriterionKind.GOODPUT})
_AT_LEAST = frozenset({CriterionKind.ACHIEVED, CriterionKind.GOODPUT, CriterionKind.AT_LEAST})


def plain(value: float) -> str:
    """A number as people write it: "15,400", "45.7", "0.25"; never "1.54e+04"."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value else "0"


def describe(criterion: Criterion, client: TrialResult) -> str:
    if criterion.unit == "ms":
        measured, bound = f"{plain(criterion.measured or 0)} ms", f"{plain(criterion.bound)} ms"
    elif criterion.kind in _SHARES:
        measured, bound = f"{criterion.measured:.2%}", f"{criterion.bound:.2%}"
    else:
        measured, bound = plain(criterion.measured or 0), plain(criterion.bound)
    relation = "<" if criterion.kind in _AT_LEAST else ">"
    if criterion.ok:
        relation = "≤" if relation == ">" else "≥"
    text = f"{criterion.name} {measured} {relation} {bound}"
    if criterion.marginal and criterion.low is not None and criterion.high is not None:
        if criterion.unit == "ms":
            span = f"{plain(criterion.low)}-{plain(criterion.high)} ms"
        else:
            span = f"{criterion.low:.2%}-{criterion.high:.2%}"
        text += f" (95% interval {span} from {criterion.samples:,} samples straddles the bound)"
    if criterion.kind is CriterionKind.GOODPUT and criterion.samples:
        good = round((criterion.measured or 0) * criterion.samples)
        text += f" ({good:,} of {criterion.samples:,} requests answered within every bound)"
    if criterion.kind is CriterionKind.ACHIEVED:
        text += (
            f" ({client.sent_on_time:,} of {client.intended:,} scheduled starts sent within "
            f"{plain(client.late_tolerance * 1000)} ms of schedule; "
            f"nominal {client.nominal:,.0f}, {client.dropped_starts:,} dropped)"
        )
    return text
