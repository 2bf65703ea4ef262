"""Judging a step with a fault: before, during and after, each against the bar on its own.

A trial with a fault cannot be judged on its sum: a two-second spike after a
replica dies may break the whole trial's p99 although the remaining replicas
carry the load, and a long trial can hide an overload that began at the fault.
So the timeline is cut at the fault: `before` is every slice that ended before
it, `during` runs from the fault to the slice from which p99 stays within the
bar, with no errors, to the end of the trial (the recovery), and `after` is the rest. A fault
holds when before and after meet the bar and p99 recovered. Pure: called by
`plimsoll.run.step` with the step's timeline slices and the bar.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.faults import FaultOutcome, FaultWindow
from plimsoll.api.spec import PassWhen
from plimsoll.api.step import Judgement, Verdict
from plimsoll.api.timeline import TimelineSlice
from plimsoll.shared import histogram
from plimsoll.shared.timeline import points


def _bounds(bar: PassWhen) -> list[tuple[float, float]]:
    """(quantile, bound ms) of the bar's bounds on every operation's total latency: the
    bounds a slice's merged histogram can answer."""
    return [
        (b.quantile, b.below * 1000)
        for b in bar.latency
        if b.operation == "*" and b.metric == "total"
    ]


def _window(name: str, slices: Sequence[TimelineSlice], bar: PassWhen) -> FaultWindow:
    merged = histogram.merge(s.latency for s in slices)
    answered = sum(s.ok for s in slices)
    errors = sum(s.errors for s in slices)
    seconds = sum(s.seconds for s in slices)
    reasons = []
    for quantile, bound in _bounds(bar):
        value = histogram.quantile_ms(merged, quantile)
        if value is not None and value >= bound:
            reasons.append(f"p{quantile * 100:g} {value:.3g} ms ≥ {bound:g} ms")
    allowed = bar.errors.transport + bar.errors.unexpected
    if answered + errors and errors / (answered + errors) > allowed:
        reasons.append(f"errors {errors / (answered + errors):.2%} > {allowed:.2%}")
    start = slices[0].start if slices else 0.0
    return FaultWindow(
        name=name,
        start=start,
        end=start + seconds,
        p99_ms=histogram.quantile_ms(merged, 0.99),
        requests=answered + errors,
        errors=errors,
        rate=sum(s.sent for s in slices) / seconds if seconds > 0 else 0.0,
        ok=not reasons,
        reasons=reasons,
    )


def _within(point_p99: float | None, errors: int, bar: PassWhen) -> bool:
    """A slice recovered: no errors (a call failing after the fault is the fault's), and
    p99 under the bar's tightest bound at p99 or above, when it has one."""
    if errors:
        return False
    bound = min((b for q, b in _bounds(bar) if q >= 0.99), default=None)
    return bound is None or (point_p99 is not None and point_p99 < bound)


# The runner fires a fault on its own clock, from when it posted the trial; the
# generators measure from when they received it, a few milliseconds later. A slice that
# ends this close before the fault may already hold its first failures: it is "during".
CLOCK_TOLERANCE = 0.2


def judge_fault(
    slices: Sequence[TimelineSlice], at: float, bar: PassWhen, fault: str, taken: list[str]
) -> FaultOutcome:
    """The fault `fault` fired `at` seconds into the window these slices cover."""
    before = [s for s in slices if s.start + s.seconds <= at - CLOCK_TOLERANCE]
    rest = [s for s in slices if s.start + s.seconds > at - CLOCK_TOLERANCE]
    series = points(rest)
    recovered_from: int | None = None
    for index in range(len(rest) - 1, -1, -1):
        if not _within(series[index].p99_ms, series[index].errors, bar):
            break
        recovered_from = index
    if recovered_from == 0 and rest:
        recovered_from = 1 if len(rest) > 1 else None  # the fault's own slice is "during"
    during = rest[:recovered_from] if recovered_from is not None else rest
    after = rest[recovered_from:] if recovered_from is not None else []
    windows = [_window("before", before, bar), _window("during", during, bar)]
    if after:
        windows.append(_window("after", after, bar))
    recovery = max(after[0].start - at, 0.0) if after else None
    held = windows[0].ok and bool(after) and windows[-1].ok
    return FaultOutcome(
        fault=fault,
        at=at,
        taken=taken,
        windows=windows,
        caused_errors=sum(s.errors for s in during),
        recovery_s=recovery,
        held=held,
    )


def with_faults(judgement: Judgement, outcomes: Sequence[FaultOutcome]) -> Judgement:
    """The step's verdict once faults fired: the windows decide a pass or a fail (the whole
    trial's sum mixes the spike in); an invalid or noisy step stays so, since its figures
    cannot be trusted either way."""
    if not outcomes or judgement.verdict not in (Verdict.PASS, Verdict.FAIL, Verdict.MARGINAL):
        return judgement
    reasons = []
    for outcome in outcomes:
        for window in outcome.windows:
            if not window.ok and window.name != "during":
                reasons.append(f"{outcome.fault}: {window.name}: {'; '.join(window.reasons)}")
        if outcome.recovery_s is None:
            reasons.append(f"{outcome.fault}: p99 never came back within the bar")
    held = all(o.held for o in outcomes)
    return judgement.model_copy(
        update={"verdict": Verdict.PASS if held else Verdict.FAIL, "reasons": reasons}
    )
