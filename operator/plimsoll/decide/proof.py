"""Whether the planned deployment held: the proof run's step, in figures and one sentence.

Called by the runner once a proof run (`search.strategy: prove`) has its one step,
with the spec as it ran (level, replicas and zones planned) and that step. The
sentence reads as a capacity report would: "3 replicas across 3 zones held 600
requests/s; with zone a lost at 30 s, p99 rose to 8.1 ms (bar 10 ms) and 14
requests failed (0.02%); the 2 left carried 300 and 300 requests/s; it held." Pure.
"""

from __future__ import annotations

from plimsoll.api.faults import FaultOutcome
from plimsoll.api.level_unit import unit_words
from plimsoll.api.proof import Proof, ReplicaLoad
from plimsoll.api.spec import CapacityTestSpec, PassWhen
from plimsoll.api.step import StepResult, Verdict
from plimsoll.api.timeline import TimelineSlice
from plimsoll.shared import histogram
from plimsoll.shared.pod_names import target_replica


def p99_bound_ms(bar: PassWhen) -> float | None:
    """The bar's tightest bound at p99 or above on every operation's total latency."""
    bounds = [
        b.below * 1000
        for b in bar.latency
        if b.operation == "*" and b.metric == "total" and b.quantile >= 0.99
    ]
    return min(bounds, default=None)


def remaining_load(
    slices: list[TimelineSlice], outcome: FaultOutcome, zones: list[str], replicas: int
) -> list[ReplicaLoad]:
    """Requests per second sent to each replica the fault left, from the fault on."""
    rest = [s for s in slices if s.start + s.seconds > outcome.at and s.replica_sent]
    seconds = sum(s.seconds for s in rest)
    if not rest or seconds <= 0:
        return []
    names = [target_replica(i) for i in range(replicas)]
    loads = []
    for index, name in enumerate(names):
        if name in outcome.taken:
            continue
        sent = sum(s.replica_sent[index] for s in rest if index < len(s.replica_sent))
        zone = zones[index % len(zones)] if zones else None
        loads.append(ReplicaLoad(replica=name, zone=zone, rate=sent / seconds))
    return loads


def _who(replicas: int, zones: list[str]) -> str:
    text = f"{replicas} replica{'s' if replicas != 1 else ''}"
    if len(zones) > 1:
        text += f" across {len(zones)} zones"
    return text


def _ms(value: float | None) -> str:
    """Three significant figures, never in exponent form: 8.1 ms, 14.2 ms, 3,130 ms."""
    if value is None:
        return "no answer"
    if value >= 100:
        return f"{float(f'{value:.3g}'):,.0f} ms"
    return f"{value:.3g} ms"


def _rates(loads: list[ReplicaLoad]) -> str:
    rates = [f"{load.rate:,.0f}" for load in loads]
    return rates[0] if len(rates) == 1 else ", ".join(rates[:-1]) + " and " + rates[-1]


def _after_fault(
    outcome: FaultOutcome,
    slices: list[TimelineSlice],
    spec: CapacityTestSpec,
    bar_text: str,
    failures: str,
) -> tuple[float | None, list[str], list[ReplicaLoad]]:
    """(the worst p99 after the fault, the sentence's parts about it, what each replica
    left carried)."""
    after_fault = [w for w in outcome.windows if w.name != "before"]
    worst = [w.p99_ms for w in after_fault if w.p99_ms is not None]
    p99 = max(worst) if worst else None
    back = (
        f", back within it after {outcome.recovery_s:.1f} s"
        if outcome.recovery_s is not None
        else ", and never came back"
    )
    told = [f"with {outcome.fault}, p99 rose to {_ms(p99)}{bar_text}{back}, and {failures}"]
    target = spec.target
    remaining = remaining_load(slices, outcome, list(target.zones), target.replicas)
    if remaining:
        left = f"the {len(remaining)} left" if len(remaining) > 1 else "the one left"
        told.append(f"{left} carried {_rates(remaining)} {unit_words(spec.unit, short=True)}")
    return p99, told, remaining


def prove(spec: CapacityTestSpec, step: StepResult | None, why_not: str = "") -> Proof:
    """The proof of `spec` (as it ran) from its step; `why_not` says why no step was judged."""
    level = spec.search.level or 0
    units = unit_words(spec.unit, short=True)
    target = spec.target
    zones = list(target.zones)
    who = _who(target.replicas, zones)
    bar = p99_bound_ms(spec.pass_when)
    base = {"level": level, "unit": spec.unit, "replicas": target.replicas, "zones": zones}
    judged = (Verdict.PASS, Verdict.FAIL)
    if step is None or step.client is None or step.judgement.verdict not in judged:
        verdict = step.judgement.verdict.value if step is not None else "not run"
        reasons = list(step.judgement.reasons) if step is not None else []
        why = why_not or "; ".join(reasons) or verdict
        sentence = f"{who} at {level:,} {units}: the trial could not be judged ({why}); not proved."
        return Proof(held=False, bar_ms=bar, sentence=sentence, reasons=reasons or [why], **base)
    held = step.judgement.verdict is Verdict.PASS
    slices = step.client.timeline
    failed = sum(s.errors for s in slices)
    total = failed + sum(s.ok for s in slices)
    fraction = failed / total if total else 0.0
    failures = f"{failed:,} request{'s' if failed != 1 else ''} failed ({fraction:.2%})"
    bar_text = f" (bar {bar:g} ms)" if bar is not None else ""
    outcome = step.faults[0] if step.faults else None
    parts = [f"{who} {'held' if held else 'ran'} {level:,} {units}"]
    remaining: list[ReplicaLoad] = []
    if outcome is None:
        p99 = histogram.quantile_ms(histogram.merge(s.latency for s in slices), 0.99)
        parts[0] += f" for {step.duration:g} s"
        parts.append(f"p99 {_ms(p99)}{bar_text} and {failures}")
    else:
        p99, told, remaining = _after_fault(outcome, slices, spec, bar_text, failures)
        parts += told
    parts.append("it held" if held else "it did not hold")
    sentence = "; ".join(parts) + "."
    return Proof(
        held=held,
        fault=outcome.fault if outcome is not None else "",
        p99_ms=p99,
        bar_ms=bar,
        failed_requests=failed,
        failed_fraction=fraction,
        recovery_s=outcome.recovery_s if outcome is not None else None,
        remaining=remaining,
        sentence=sentence,
        reasons=[] if held else list(step.judgement.reasons),
        **base,
    )
