"""The verdict on one step: pass, fail, invalid or noisy, with every reason.

The runner calls `judge(StepInput(...), spec.pass_when, spec.noise, spec.generators)`
after each trial, once the generators' results are merged and the server side
is read, and hands the verdict to the search. Pure: data in, a `Judgement` out.

Precedence:

1. invalid: the measurement cannot be trusted and the run stops. A generator
   returned no result or did not finish; a generator or the mock ran out of
   CPU; the generators dropped more starts than tolerated; server metrics the
   bar or the attribution needs were missing (a PromQL query without a value
   is named, `target.missing` is quoted), unless the target restarted within
   the window: that is a failure, step 4. "No data" is never a pass.
2. noisy: the direct-call floor exceeded `noise.floor_bound` at
   `noise.floor_quantile`, or had no samples, so the host stalled and the
   step is repeated. Only when a floor bound is configured.
3. noisy as well: a criterion failed while the host was busy (`StepInput.contention`,
   decided by `plimsoll.decide.contention`): the failure may be the host's doing,
   so the step is repeated rather than counted against the target.
   Never, for 2 and 3, when the target ran out of memory (OOM-killed, restarted, or its
   working set at the limit, `plimsoll.decide.attribution.memory_exhausted`): that step
   is judged as on a quiet host (a definite failure fails), and the reasons say the busy
   signals were set aside; a quiet host would have killed it too.
   Except, also for 2 and 3: when the target's own saturation explains a failure
   (`plimsoll.decide.attribution.saturated`: its throttling breaks the bar's tail,
   or it used its quota) and the target did not wait for a CPU outside its
   throttling, the failure is the target's whatever the floor says: a host that
   gave the target all its quota did not make it smaller.
4. fail: every criterion that failed definitely (its 95% confidence interval,
   `plimsoll.decide.confidence`, lies above the bound), with its measured value
   and its bound.
5. invalid again if nothing failed but a client-side criterion had no samples
   (a latency quantile of an operation that never answered): a definite
   failure elsewhere outranks a missing number, a missing number never passes
   (attainment too, when a generator did not judge its answers).
6. marginal: a latency quantile, an error or shed share, or the attainment of
   `passWhen.goodput` (`plimsoll.decide.goodput`) whose interval straddles its
   bound, passing or failing: the step's own samples cannot tell, so it is
   repeated (`noise.retries`), and one that stays marginal moves neither end of
   the bracket.
7. pass.

The achieved share is sent-on-time ÷ scheduled: the starts the generators' own
schedule put inside the measured window, and how many of them left within the
workload's late tolerance. It judges what the generators control, so the
variance of a Poisson draw (about 2.6% over 15 s at 100/s) can never fail a step.

Bounds are inclusive: a p99 bound of 10 ms passes at 10 ms, as capacity budgets are
"within BUDGET_MS". Latencies are compared in milliseconds, shares as fractions.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

from plimsoll.api.spec import Attribution, Generators, LatencyBound, Noise, PassWhen
from plimsoll.api.step import (
    BusySignal,
    Contention,
    Criterion,
    CriterionKind,
    Judgement,
    ResourceUsage,
    Verdict,
)
from plimsoll.api.trial import Outcomes, TrialResult, TrialState
from plimsoll.api.workload import LoadModel
from plimsoll.decide.attribution import memory_exhausted, saturated
from plimsoll.decide.confidence import (
    quantile_interval,
    share_interval,
    share_straddles,
    straddles,
)

# Names in `StepInput.others` that are measuring equipment: if they run out of CPU the
# step measured them, so it is invalid.
from plimsoll.decide.contention import EQUIPMENT, TARGET_WAIT
from plimsoll.decide.goodput import criterion as goodput_criterion
from plimsoll.decide.status_steps import without_queries
from plimsoll.decide.step_summary import bound_histogram, floor_ms
from plimsoll.shared import histogram

ACHIEVED = "achieved share of schedule"


@dataclass(frozen=True)
class StepInput:
    """Everything a step measured that the bar judges."""

    client: TrialResult | None  # the merged generators' result; None: one returned nothing
    level: int
    model: LoadModel = LoadModel.RATE
    target: ResourceUsage | None = None  # None: no server side (an external URL)
    others: Mapping[str, ResourceUsage] = field(default_factory=dict)
    promql: Mapping[str, float | None] = field(default_factory=dict)
    contention: Contention | None = None  # None: not measured (no verdict on the host)


def judge(
    result: StepInput,
    bar: PassWhen,
    noise: Noise,
    generators: Generators,
    attribution: Attribution | None = None,
) -> Judgement:
    client = result.client
    if client is None:
        return Judgement(verdict=Verdict.INVALID, reasons=["a generator returned no result"])
    criteria = _criteria(result, client, bar)
    floor = _floor(result, client, noise)
    if floor is not None:
        criteria.append(floor)
    invalid = _invalid(result, client, bar, generators)
    if invalid:
        return Judgement(verdict=Verdict.INVALID, reasons=invalid, criteria=criteria)
    contention = result.contention
    signals = contention.signals if contention is not None and contention.busy else []
    memory = memory_exhausted(result.target, attribution or Attribution())
    if memory is not None:
        return _memory_exhausted(criteria, client, memory, signals, floor)
    floor_failed = floor is not None and not floor.ok
    failed = [
        c
        for c in criteria
        if not c.ok and c.measured is not None and c is not floor and not c.marginal
    ]
    if failed and (floor_failed or (signals and noise.repeat_when_busy)):
        own = _own_saturation(result, attribution or Attribution(), bar)
        if own is not None:
            shown = list(signals)
            named = contention is not None and BusySignal.FLOOR in contention.busy_by
            if floor is not None and floor_failed and floor.measured is not None and not named:
                shown.append(f"the direct-call floor: {_describe(floor, client)}")
            host = "; ".join(shown) or "the direct-call floor had no samples"
            reasons = [_describe(c, client) for c in failed]
            reasons.append(
                f"the host looked busy ({host}), but the target's own saturation explains "
                f"the failure ({own}): it is the target's"
            )
            return Judgement(verdict=Verdict.FAIL, reasons=reasons, criteria=criteria)
    if floor is not None and not floor.ok:
        why = (
            "the direct-call floor had no samples: the host stalled"
            if floor.measured is None
            else f"the direct-call floor: {_describe(floor, client)}: the host stalled"
        )
        return Judgement(verdict=Verdict.NOISY, reasons=[why], criteria=criteria)
    failed = [c for c in criteria if not c.ok and c.measured is not None]
    if failed and signals and noise.repeat_when_busy:
        reasons = [
            "the host was busy (" + "; ".join(signals) + "), so this failure is "
            "not the target's: " + "; ".join(_describe(c, client) for c in failed)
        ]
        return Judgement(verdict=Verdict.NOISY, reasons=reasons, criteria=criteria)
    note = (
        "the host was busy (" + "; ".join(signals) + "); "
        "noise.repeatWhenBusy is off, so this counts as a fail"
        if signals
        else None
    )
    return _on_merit(criteria, criteria, client, note)


def _on_merit(
    criteria: list[Criterion], judged: list[Criterion], client: TrialResult, note: str | None
) -> Judgement:
    """Steps 4 to 7 over the `judged` criteria: fail, invalid, marginal or pass; `note`
    joins the reasons of a fail."""
    failed = [c for c in judged if not c.ok and c.measured is not None]
    if any(not c.marginal for c in failed):
        reasons = [_describe(c, client) for c in failed]
        if note is not None:
            reasons.append(note)
        return Judgement(verdict=Verdict.FAIL, reasons=reasons, criteria=criteria)
    missing = [c for c in judged if c.measured is None]
    if missing:
        reasons = [f"no data for {c.name}: no data is never a pass" for c in missing]
        return Judgement(verdict=Verdict.INVALID, reasons=reasons, criteria=criteria)
    marginal = [c for c in judged if c.marginal]
    if marginal:
        reasons = [f"marginal: {_describe(c, client)}" for c in marginal]
        return Judgement(verdict=Verdict.MARGINAL, reasons=reasons, criteria=criteria)
    return Judgement(verdict=Verdict.PASS, criteria=criteria)


def _memory_exhausted(
    criteria: list[Criterion],
    client: TrialResult,
    memory: str,
    signals: list[str],
    floor: Criterion | None,
) -> Judgement:
    """A step where the target ran out of memory, judged without the host's signals: the
    floor is set aside with them (a host stalled by the target's own reclaim or restart
    is not a busy host)."""
    shown = list(signals)
    if floor is not None and not floor.ok:
        shown.append(
            "the direct-call floor had no samples"
            if floor.measured is None
            else f"the direct-call floor: {_describe(floor, client)}"
        )
    aside = (
        f"the host looked busy ({'; '.join(shown)}), but the target ran out of memory "
        f"({memory}): the failure is the target's, as it would be on a quiet host"
        if shown
        else None
    )
    return _on_merit(criteria, [c for c in criteria if c is not floor], client, aside)


def _own_saturation(result: StepInput, thresholds: Attribution, bar: PassWhen) -> str | None:
    """The target's saturation that explains a failure, unless the host starved it (it
    waited for a CPU outside its throttling): then the floor and the busy signals judge."""
    contention = result.contention
    wait = contention.target_cpu_wait if contention is not None else None
    if wait is not None and wait > TARGET_WAIT:
        return None
    return saturated(result.target, thresholds, bar)


def _invalid(
    result: StepInput, client: TrialResult, bar: PassWhen, generators: Generators
) -> list[str]:
    reasons: list[str] = []
    if client.state is not TrialState.DONE:
        sample = f" ({client.errors[0]})" if client.errors else ""
        reasons.append(f"the trial ended {client.state.value}, not done{sample}")
    if client.measured_seconds <= 0:
        reasons.append("the generators measured no time")
    busiest = max(client.peak_cpu_fraction, client.cpu_fraction)
    if busiest > generators.max_cpu:
        reasons.append(
            f"a generator used {busiest:.0%} of its CPU (max {generators.max_cpu:.0%}): "
            "it, not the target, may have been the limit"
        )
    if client.intended > 0 and client.dropped_starts / client.intended > generators.max_dropped:
        share = client.dropped_starts / client.intended
        reasons.append(
            f"the generators dropped {share:.2%} of starts (max {generators.max_dropped:.2%})"
        )
    for name, usage in sorted(result.others.items()):
        if not name.startswith(EQUIPMENT):
            continue
        reason = _equipment_out_of_cpu(name, usage, generators.max_cpu)
        if reason is not None:
            reasons.append(reason)
    target = result.target
    # A target that restarted inside the window failed at this level, whatever else went
    # unread: a window cut by a restart leaves each container's counter too few samples
    # (cAdvisor's ~10 s refresh on a real kubelet), and that must not hide the failure.
    died = target is not None and (target.restarts > 0 or target.oom_kills > 0)
    if target is not None and target.missing and not died:
        reasons.append(missing_metrics_reason(target))
    for bound in bar.promql:
        if result.promql.get(bound.name) is None:
            reasons.append(f"promql {bound.name!r} returned no value (query: {bound.query})")
    return reasons


def _equipment_out_of_cpu(name: str, usage: ResourceUsage, max_cpu: float) -> str | None:
    """Why a pinned mock or generator was short of CPU, or None. Its mean share says so
    when it ran flat out; CFS throttling says so when its demand came in bursts: a
    process held back in most periods stalls up to a period (100 ms) each time, and its
    mean can stay under the bar (measured: a 50m mock throttled in nearly every period
    averaged 82% of its quota)."""
    if not usage.cpu_limit_cores:
        return None
    if usage.cpu_mean_cores is not None:
        share = usage.cpu_mean_cores / usage.cpu_limit_cores
        if share > max_cpu:
            return f"{name} used {share:.0%} of its CPU (max {max_cpu:.0%}): it ran out of CPU"
    if usage.throttled_ratio is not None and usage.throttled_ratio > max_cpu:
        return (
            f"{name} hit its CPU quota in {usage.throttled_ratio:.0%} of CFS periods "
            f"(max {max_cpu:.0%}): it ran out of CPU"
        )
    return None


# What a cluster needs for the target's figures, in one sentence a user can act on.
_METRICS_ADVICE = {
    "prometheus": (
        "have Prometheus scrape every kubelet's /metrics/cadvisor (kube-prometheus-stack "
        "does) and point spec.metrics.prometheusUrl at it"
    ),
}
_METRICS_ADVICE_DEFAULT = "check that the target's cgroup is readable by Plimsoll"


def missing_metrics_reason(target: ResourceUsage) -> str:
    """One sentence: what was missing and what to install or scrape; the queries that
    went unanswered stay in the report (the step's `target.missing` and `queries`)."""
    what = "; ".join(dict.fromkeys(without_queries(m) for m in target.missing))
    advice = _METRICS_ADVICE.get(target.source, _METRICS_ADVICE_DEFAULT)
    return f"server metrics missing ({what}): {advice}; the queries are in the report"


def _criteria(result: StepInput, client: TrialResult, bar: PassWhen) -> list[Criterion]:
    criteria = [_latency(client, bound) for bound in bar.latency]
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
    for name, (count, bound) in shares.items():
        measured = count / total if total else None
        ok = measured is not None and measured <= bound
        label = "shed answers" if name == "shed" else f"{name} errors"
        interval = share_interval(count, total)
        criteria.append(
            Criterion(
                name=label,
                kind=CriterionKind.SHARE,
                measured=measured,
                bound=bound,
                ok=ok,
                low=interval.low if interval else None,
                high=interval.high if interval else None,
                samples=total,
                marginal=share_straddles(count, total, bound),
            )
        )
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
        criteria.append(
            Criterion(
                name="unhealthy streams",
                kind=CriterionKind.COUNT,
                measured=unhealthy,
                bound=0,
                ok=unhealthy == 0,
            )
        )
    if result.target is not None:
        crashes = result.target.restarts + result.target.oom_kills
        criteria.append(
            Criterion(
                name="target restarts and OOM kills",
                kind=CriterionKind.COUNT,
                measured=crashes,
                bound=0,
                ok=crashes == 0,
            )
        )
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
                label = f"{promql.name} {kind.value}"
                criteria.append(
                    Criterion(
                        name=label, kind=kind, measured=value, bound=limit, ok=holds(value, limit)
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


def _floor(result: StepInput, client: TrialResult, noise: Noise) -> Criterion | None:
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


def _describe(criterion: Criterion, client: TrialResult) -> str:
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
