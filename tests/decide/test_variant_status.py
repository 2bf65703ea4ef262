"""status.variants as a run goes: Pending, Running, each ceiling, then Δ and verdict."""

from __future__ import annotations

from plimsoll.api.comparison import Difference
from plimsoll.api.status import Ceiling, VariantState
from plimsoll.api.step import LimitedBy
from plimsoll.decide.comparison import Contender, compare
from plimsoll.decide.variant_status import (
    pending_variants,
    run_ended,
    variant_finished,
    variant_started,
)


def ceiling(variant: str, level: int, high: int, *, complete: bool = True) -> Ceiling:
    return Ceiling(
        level=level,
        unit="rps",
        low=level,
        high=high,
        limited_by=LimitedBy.CPU,
        complete=complete,
        variant=variant,
    )


def test_a_run_starts_pending_and_each_variant_runs_then_ends_with_its_ceiling() -> None:
    rows = pending_variants(["embedded", "postgres"])
    assert [(r.name, r.state) for r in rows] == [
        ("embedded", VariantState.PENDING),
        ("postgres", VariantState.PENDING),
    ]
    rows = variant_started(rows, "embedded")
    rows = variant_finished(rows, ceiling("embedded", 100, 110))
    rows = variant_started(rows, "postgres")
    first, second = rows
    assert (first.state, first.ceiling, first.last_pass, first.first_fail) == (
        VariantState.SUCCEEDED,
        100,
        100,
        110,
    )
    assert first.limited_by is LimitedBy.CPU
    assert (second.state, second.ceiling) == (VariantState.RUNNING, None)


def test_the_end_of_the_run_adds_the_change_and_verdict_of_the_comparison() -> None:
    ceilings = [ceiling("embedded", 100, 110), ceiling("postgres", 80, 90)]
    comparison = compare([Contender(c.variant, c) for c in ceilings])
    rows = variant_finished(pending_variants(["embedded", "postgres"]), ceilings[0])
    rows = run_ended(rows, ceilings, comparison)
    assert [(r.name, r.ceiling, r.delta_percent, r.verdict) for r in rows] == [
        ("embedded", 100, 0.0, Difference.BASELINE),
        ("postgres", 80, -20.0, Difference.LOWER),  # bands 100–110 and 80–90 do not touch
    ]
    assert {r.state for r in rows} == {VariantState.SUCCEEDED}


def test_a_variant_the_run_stopped_in_is_failed_and_one_never_started_stays_pending() -> None:
    rows = variant_started(pending_variants(["a", "b", "c"]), "a")
    rows = variant_finished(rows, ceiling("a", 50, 60))
    rows = variant_started(rows, "b")  # the target died while b's pods started
    rows = run_ended(rows, [ceiling("a", 50, 60)], None)
    assert [(r.name, r.state) for r in rows] == [
        ("a", VariantState.SUCCEEDED),
        ("b", VariantState.FAILED),
        ("c", VariantState.PENDING),
    ]


def test_a_resumed_variant_starts_afresh_and_a_range_only_ceiling_is_failed() -> None:
    rows = variant_finished(pending_variants(["a"]), ceiling("a", 50, 60))
    rows = variant_started(rows, "a")
    assert (rows[0].state, rows[0].ceiling) == (VariantState.RUNNING, None)
    rows = variant_finished(rows, ceiling("a", 40, 80, complete=False))
    assert (rows[0].state, rows[0].last_pass, rows[0].first_fail) == (VariantState.FAILED, 40, 80)
