"""The ceiling's basis: full-length trials counted, marginal levels named, the failing
quantile with its interval."""

from __future__ import annotations

from datetime import UTC, datetime

from plimsoll.api.step import Criterion, CriterionKind, Judgement, StepResult, TrialKind, Verdict
from plimsoll.decide.basis import basis

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def judged(
    index: int, level: int, verdict: Verdict, *criteria: Criterion, **kw: object
) -> StepResult:
    return StepResult(
        index=index,
        level=level,
        started_at=NOW,
        ended_at=NOW,
        duration=60.0,
        judgement=Judgement(verdict=verdict, criteria=list(criteria)),
        **kw,  # type: ignore[arg-type]
    )


P99_FAIL = Criterion(
    name="p99 total latency of all operations",
    kind=CriterionKind.LATENCY,
    quantile="p99",
    measured=67.3,
    bound=50.0,
    unit="ms",
    ok=False,
    low=58.1,
    high=76.3,
    samples=11_000,
)


def test_the_issues_ceiling_reads_as_the_issue_asks() -> None:
    steps = [
        judged(0, 181, Verdict.PASS),
        judged(1, 187, Verdict.FAIL, P99_FAIL),
        judged(2, 181, Verdict.PASS),
    ]
    assert basis(181, 187, steps) == "passed 2 of 2; 187 failed 1 of 1, p99 67.3 ms ± 9.1"


def test_probes_do_not_count_and_marginal_levels_are_named() -> None:
    steps = [
        judged(0, 160, Verdict.PASS, kind=TrialKind.PROBE),
        judged(1, 160, Verdict.PASS),
        judged(2, 170, Verdict.MARGINAL),
        judged(3, 170, Verdict.MARGINAL),
        judged(4, 180, Verdict.FAIL),
        judged(5, 160, Verdict.FAIL),
    ]
    assert basis(160, 180, steps) == "passed 1 of 2; 170 marginal 2 of 2; 180 failed 1 of 1"
    assert basis(None, None, []) == ""


def test_the_failed_quantile_is_read_from_typed_facts_never_from_the_name() -> None:
    """Issue 53: the basis read "floor" in a criterion's name and the quantile off its
    first word; a floor criterion is told by its kind, the quantile by its field."""
    floor = Criterion(
        name="p99 latency of a floor-plan service",  # a name that fooled the old reading
        kind=CriterionKind.LATENCY,
        quantile="p99.9",
        measured=812.0,
        bound=500.0,
        unit="ms",
        ok=False,
    )
    host = Criterion(
        name="p99 direct-call floor",
        kind=CriterionKind.FLOOR,
        quantile="p99",
        measured=40.0,
        bound=5.0,
        unit="ms",
        ok=False,
    )
    steps = [judged(0, 100, Verdict.PASS), judged(1, 120, Verdict.FAIL, host, floor)]
    assert basis(100, 120, steps) == "passed 1 of 1; 120 failed 1 of 1, p99.9 812 ms"
