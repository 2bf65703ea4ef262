"""The gate's baseline, its verdict (the noise rule of `plimsoll.decide.difference`, the
one `plimsoll compare` uses) and the history it keeps: examples, then properties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from plimsoll.api.comparison import Band
from plimsoll.api.gate import HistoryEntry, Regression
from plimsoll.api.status import Ceiling
from plimsoll.decide.regression import (
    Baseline,
    baseline_of,
    change_column,
    entry_of,
    judge_regression,
    remember,
)

T0 = datetime(2026, 11, 1, tzinfo=UTC)
PREVIOUS = Regression(baseline="previous", threshold=0.10)


def ceiling(level: int | None, high: int | None, *, spread: list[int] | None = None) -> Ceiling:
    return Ceiling(
        level=level, low=level, high=high, spread=spread or [], unit="users", complete=True
    )


def run(run_id: str, level: int | None, days: int, **kw: object) -> HistoryEntry:
    return HistoryEntry(
        run_id=run_id,
        finished_at=T0 + timedelta(days=days),
        level=level,
        **kw,  # type: ignore[arg-type]
    )


def test_previous_is_the_latest_complete_run_of_the_variant() -> None:
    history = [
        run("a", 100, 1),
        run("b", 140, 2),
        run("c", 90, 3, complete=False),  # a range only: never a baseline
        run("d", 200, 4, variant="postgres"),
    ]
    found = baseline_of(history, "default", PREVIOUS)
    assert found == Baseline(140, Band(low=140, high=None), "previous run b")


def test_best_is_the_highest_and_a_fixed_level_needs_no_history() -> None:
    history = [run("a", 150, 1, spread=[145, 150]), run("b", 120, 2)]
    assert baseline_of(history, "default", Regression(baseline="best")) == Baseline(
        150, Band(low=145, high=None), "best run a"
    )
    assert baseline_of([], "default", Regression(baseline="200")) == Baseline(
        200, Band(low=200, high=200), "fixed level"
    )
    assert baseline_of([], "default", PREVIOUS) is None


def test_a_drop_beyond_threshold_and_noise_regresses() -> None:
    baseline = Baseline(140, Band(low=130, high=150), "previous run b")
    verdict = judge_regression(ceiling(100, 110), baseline, PREVIOUS)
    assert verdict.regressed
    assert verdict.change == round((100 - 140) / 140, 4)
    assert "-29%: regressed" in verdict.message
    assert "100..110 lies below the baseline's 130..150" in verdict.message


def test_a_drop_whose_range_overlaps_the_baselines_repeats_is_within_noise() -> None:
    # 15% lower, but it first failed at 135, above the 130 the baseline's band starts at.
    baseline = Baseline(140, Band(low=130, high=150), "previous run b")
    verdict = judge_regression(ceiling(119, 135), baseline, PREVIOUS)
    assert not verdict.regressed
    assert "within noise" in verdict.message
    assert "119..135 touches the baseline's 130..150" in verdict.message


def test_a_small_drop_is_not_a_regression() -> None:
    verdict = judge_regression(
        ceiling(130, 135), Baseline(140, Band(low=140), "previous run b"), PREVIOUS
    )
    assert not verdict.regressed
    assert verdict.message.endswith("no regression")


def test_no_passing_level_regresses_against_a_baseline_that_passed_there() -> None:
    verdict = judge_regression(
        ceiling(None, 20), Baseline(140, Band(low=140), "previous run b"), PREVIOUS
    )
    assert verdict.regressed
    assert verdict.change == -1.0
    assert "no level vs 140 users" in verdict.message


def test_without_a_baseline_the_verdict_says_so() -> None:
    verdict = judge_regression(ceiling(100, 110), None, PREVIOUS)
    assert not verdict.regressed
    assert verdict.baseline is None
    assert "no earlier complete run" in verdict.message
    assert change_column([verdict]) == ""


def test_change_column_shows_the_first_variant() -> None:
    regressed = judge_regression(
        ceiling(100, 110), Baseline(140, Band(low=130, high=150), "x"), PREVIOUS
    )
    assert change_column([regressed]) == "-29% REGRESSED"


def test_history_keeps_the_newest_runs_per_variant_and_replaces_a_rerecorded_run() -> None:
    history = [run(f"r{i}", 100 + i, i) for i in range(10)]
    history += [run("p0", 50, 0, variant="postgres")]
    new = entry_of(ceiling(120, 125), "r10", T0 + timedelta(days=10))
    kept = remember(history, [new], limit=10)
    assert [e.run_id for e in kept if e.variant == "default"] == [f"r{i}" for i in range(1, 11)]
    assert [e.run_id for e in kept if e.variant == "postgres"] == ["p0"]
    again = remember(kept, [new], limit=10)
    assert again == kept


levels = st.integers(min_value=1, max_value=100_000)
thresholds = st.floats(min_value=0.0, max_value=0.9)


@given(base=levels, current=levels, threshold=thresholds)
def test_a_ceiling_at_or_above_its_baseline_never_regresses(
    base: int, current: int, threshold: float
) -> None:
    current = max(current, base)
    verdict = judge_regression(
        ceiling(current, current + 1),
        Baseline(base, Band(low=base, high=base), "b"),
        Regression(threshold=threshold),
    )
    assert not verdict.regressed


@given(base=levels, current=levels, threshold=thresholds, reliable_gap=st.integers(0, 1000))
def test_a_regression_is_always_beyond_threshold_and_noise(
    base: int, current: int, threshold: float, reliable_gap: int
) -> None:
    low = max(base - reliable_gap, 1)
    high = current + max(current // 10, 1)
    baseline = Baseline(base, Band(low=low, high=base + 1), "b")
    verdict = judge_regression(ceiling(current, high), baseline, Regression(threshold=threshold))
    if verdict.regressed:
        assert (current - base) / base < -threshold
        assert high < low  # the two bands do not touch


@given(level=levels, threshold=thresholds)
def test_the_same_ceiling_twice_never_regresses(level: int, threshold: float) -> None:
    first = entry_of(ceiling(level, level + 5), "a", T0)
    baseline = baseline_of([first], "default", Regression(threshold=threshold))
    verdict = judge_regression(ceiling(level, level + 5), baseline, Regression(threshold=threshold))
    assert not verdict.regressed
