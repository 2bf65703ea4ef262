"""Why a step's measurement cannot be trusted (the verdict's first rule: invalid): the
trial did not finish, a generator or a mock ran out of CPU, the generators dropped
starts, or figures the bar or the attribution needs were missing. "No data" is never a
pass."""

from __future__ import annotations

from plimsoll.api.spec import Generators, PassWhen
from plimsoll.api.step import ResourceUsage
from plimsoll.api.trial import TrialResult, TrialState

# Names in `StepInput.others` that are measuring equipment: if they run out of CPU the
# step measured them, so it is invalid.
from plimsoll.decide.contention import EQUIPMENT
from plimsoll.decide.status_steps import without_queries
from plimsoll.decide.step_input import StepInput


def untrusted_reasons(
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
