"""What a ceiling rests on, in a few words: "passed 2 of 2; 187 failed 1 of 1, p99 67 ms ± 9".

The variant loop (`plimsoll.run.variant`) calls `basis` with the search's answer
and the variant's steps, and writes it into `Ceiling.basis`; the report's
sentence quotes it after the level. It counts full-length trials only (probes
narrow the bracket, they are not evidence of the answer), names the levels that
stayed marginal, and gives the failing quantile with the half-width of its 95%
interval (`plimsoll.decide.confidence`), so a reader sees how far from the
bound the first failure was. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.step import Criterion, CriterionKind, StepResult, TrialKind, Verdict
from plimsoll.decide.criteria import plain

_JUDGED = (Verdict.PASS, Verdict.FAIL, Verdict.MARGINAL)


def basis(level: int | None, high: int | None, steps: Sequence[StepResult]) -> str:
    full = [s for s in steps if s.kind is TrialKind.FULL and s.judgement.verdict in _JUDGED]
    parts: list[str] = []
    if level is not None:
        at = [s for s in full if s.level == level]
        passed = sum(s.judgement.verdict is Verdict.PASS for s in at)
        parts.append(f"passed {passed} of {len(at)}")
    marginal = sorted({s.level for s in full if s.judgement.verdict is Verdict.MARGINAL})
    for stayed in marginal:
        at = [s for s in full if s.level == stayed]
        count = sum(s.judgement.verdict is Verdict.MARGINAL for s in at)
        parts.append(f"{stayed:,} marginal {count} of {len(at)}")
    if high is not None:
        at = [s for s in full if s.level == high]
        failed = [s for s in at if s.judgement.verdict is Verdict.FAIL]
        text = f"{high:,} failed {len(failed)} of {len(at)}"
        quantile = _failed_quantile(failed[-1]) if failed else None
        if quantile is not None:
            text += f", {quantile}"
        parts.append(text)
    return "; ".join(parts)


def _failed_quantile(step: StepResult) -> str | None:
    """The first latency quantile the step failed, as "p99 67 ms ± 9"."""
    for criterion in step.judgement.criteria:
        latency = criterion.kind is CriterionKind.LATENCY
        if latency and not criterion.ok and criterion.measured is not None:
            return _with_interval(criterion)
    return None


def _with_interval(criterion: Criterion) -> str:
    text = f"{criterion.quantile or 'latency'} {plain(criterion.measured or 0)} ms"
    if criterion.low is not None and criterion.high is not None:
        text += f" ± {plain((criterion.high - criterion.low) / 2)}"
    return text
