"""Properties of the search on simulated targets with known ceilings (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.simulated_targets import SimTarget, run
from plimsoll.api.spec import Search, Strategy, Trial
from plimsoll.api.step import TrialKind, Verdict
from plimsoll.decide.search import noise_free_bound

TRIAL = Trial(duration=60.0)
SEARCHING = [Strategy.DOUBLING, Strategy.PROBE]


@st.composite
def searches(draw: st.DrawFn, strategy: Strategy) -> Search:
    floor = draw(st.integers(1, 1000))
    start = draw(st.integers(floor, 20_000))
    limit = draw(st.integers(max(start, floor + 1), 200_000))
    return Search(
        strategy=strategy,
        floor=floor,
        start=start,
        limit=limit,
        precision=draw(st.sampled_from([0.01, 0.02, 0.05, 0.1, 0.25, 0.5])),
        repeats=draw(st.integers(0, 3)),
        max_trials=500,
    )


@st.composite
def cases(draw: st.DrawFn, noisy: bool) -> tuple[Search, SimTarget]:
    search = draw(searches(draw(st.sampled_from(SEARCHING))))
    capacity = draw(st.integers(1, 300_000))
    if not noisy:
        return search, SimTarget(capacity=capacity)
    target = SimTarget(
        capacity=capacity,
        wiggle=draw(st.sampled_from([0.0, 0.01, 0.03])),
        jitter=draw(st.sampled_from([0.0, 0.01, 0.03])),
        probe_bias=draw(st.sampled_from([0.0, 0.05, 0.2])),
        false_fail=draw(st.sampled_from([0.0, 0.05, 0.2])),
        stall=draw(st.sampled_from([0.0, 0.1, 0.3])),
        seed=draw(st.integers(0, 2**32)),
    )
    return search.model_copy(update={"max_trials": draw(st.integers(1, 60))}), target


@settings(max_examples=300, deadline=None)
@given(cases(noisy=False))
def test_on_monotone_noise_free_targets_the_ceiling_is_within_precision(
    case: tuple[Search, SimTarget],
) -> None:
    search, target = case
    result = run(search, TRIAL, target)
    ceiling = result.finished.ceiling
    truth = min(target.capacity, search.limit)
    if truth < search.floor:
        assert ceiling.level is None
        assert not ceiling.complete
        return
    assert ceiling.level is not None
    assert truth * (1 - search.precision) <= ceiling.level <= truth
    assert ceiling.complete == (target.capacity < search.limit)
    if ceiling.high is not None:
        assert ceiling.high <= ceiling.level * (1 + search.precision) + 1e-9 or (
            ceiling.high - ceiling.level <= 1
        )
    assert len(ceiling.spread) == search.repeats + 1


@settings(max_examples=300, deadline=None)
@given(cases(noisy=False), st.sampled_from([0.0, 0.01, 0.03]))
def test_noise_free_runs_end_within_the_stated_bound(
    case: tuple[Search, SimTarget], wiggle: float
) -> None:
    search, target = case
    target = SimTarget(capacity=target.capacity, wiggle=wiggle)
    result = run(search, TRIAL, target)
    assert len(result.history) <= noise_free_bound(search)
    ceiling = result.finished.ceiling
    if ceiling.level is not None and ceiling.complete:
        # A slightly non-monotone curve: the answer sits at one of its crossings.
        assert target.truth_low * (1 - search.precision) <= ceiling.level <= target.truth_high


@settings(max_examples=300, deadline=None)
@given(cases(noisy=True))
def test_no_reported_ceiling_ever_failed_at_full_length(case: tuple[Search, SimTarget]) -> None:
    search, target = case
    result = run(search, TRIAL, target, retries=2)
    assert len(result.history) <= search.max_trials
    level = result.finished.ceiling.level
    failed = {
        r.level for r in result.history if r.kind is TrialKind.FULL and r.verdict is Verdict.FAIL
    }
    assert level is None or level not in failed
    if level is not None:
        assert any(
            r.level == level and r.kind is TrialKind.FULL and r.verdict is Verdict.PASS
            for r in result.history
        )


@settings(max_examples=150, deadline=None)
@given(cases(noisy=True))
def test_resuming_from_any_prefix_gives_the_same_answer(case: tuple[Search, SimTarget]) -> None:
    search, target = case
    whole = run(search, TRIAL, target, retries=2)
    for cut in range(len(whole.history) + 1):
        resumed = run(search, TRIAL, target, retries=2, history=whole.history[:cut])
        assert resumed.finished == whole.finished
        assert resumed.history == whole.history


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 100_000), min_size=1, max_size=12),
    st.integers(1, 100_000),
    st.floats(0.0, 0.3),
    st.integers(0, 2**32),
)
def test_steps_reports_exactly_its_list(
    levels: list[int], capacity: int, stall: float, seed: int
) -> None:
    search = Search(strategy=Strategy.STEPS, levels=levels, max_trials=500)
    target = SimTarget(capacity=capacity, stall=stall, seed=seed)
    result = run(search, TRIAL, target, retries=10)
    settled = [r for r in result.history if r.verdict is not Verdict.NOISY]
    ceiling = result.finished.ceiling
    if ceiling.complete or ceiling.every_level_passed:
        assert [r.level for r in settled] == levels
        # Complete only with a failing level above the answer: else it is "at least".
        assert ceiling.complete is (ceiling.high is not None)
    else:  # only ever stopped by eleven stalls in a row
        assert "noisy" in ceiling.stop_reason
        assert [r.level for r in settled] == levels[: len(settled)]
    passed = [lv for lv in levels if lv <= capacity]
    failed = [lv for lv in levels if lv > capacity]
    if result.finished.ceiling.complete:
        expected = max((lv for lv in passed if not failed or lv < min(failed)), default=None)
        assert result.finished.ceiling.level == expected
