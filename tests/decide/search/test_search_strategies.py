"""Worked examples of each strategy against scripted and simulated targets."""

from __future__ import annotations

from bench.simulated_targets import SimTarget, record, run
from plimsoll.api.spec import Search, Strategy, Trial
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.search import Finished, NextTrial, next_action

TRIAL = Trial(duration=60.0)


def full_levels(history: list[StepRecord]) -> list[int]:
    return [r.level for r in history if r.kind is TrialKind.FULL]


def test_doubling_climbs_bisects_and_repeats_as_the_seeds_describe() -> None:
    search = Search(start=1000, precision=0.05, repeats=2)
    result = run(search, TRIAL, SimTarget(capacity=3000))
    levels = [r.level for r in result.history]
    assert levels == [1000, 2000, 4000, 3000, 3500, 3250, 3125, 3000, 3000]
    ceiling = result.finished.ceiling
    assert (ceiling.level, ceiling.low, ceiling.high) == (3000, 3000, 3125)
    assert ceiling.complete
    assert ceiling.spread == (3000, 3000, 3000)


def test_doubling_halves_down_when_the_first_step_fails() -> None:
    search = Search(start=1000, floor=100, precision=0.1, repeats=2)
    result = run(search, TRIAL, SimTarget(capacity=300))
    levels = [r.level for r in result.history]
    assert levels == [1000, 500, 250, 375, 312, 281, 296, 296, 296]
    assert result.finished.ceiling.level == 296


def test_doubling_reports_no_level_when_the_floor_fails() -> None:
    search = Search(start=400, floor=100)
    result = run(search, TRIAL, SimTarget(capacity=50))
    assert [r.level for r in result.history] == [400, 200, 100]
    ceiling = result.finished.ceiling
    assert ceiling.level is None
    assert ceiling.high == 100
    assert not ceiling.complete
    assert "floor (100) failed" in ceiling.stop_reason


def test_doubling_stops_at_the_limit_with_a_range_only() -> None:
    search = Search(start=1000, limit=5000, repeats=1)
    result = run(search, TRIAL, SimTarget(capacity=1_000_000))
    assert [r.level for r in result.history] == [1000, 2000, 4000, 5000, 5000]
    ceiling = result.finished.ceiling
    assert (ceiling.level, ceiling.high, ceiling.complete) == (5000, None, False)
    assert "limit (5000)" in ceiling.stop_reason


def test_a_flip_during_the_repeats_drops_the_level() -> None:
    search = Search(start=1000, precision=0.05, repeats=2)
    scripted = [(1000, Verdict.PASS), (2000, Verdict.FAIL), (1500, Verdict.PASS)]
    scripted += [(1750, Verdict.FAIL), (1625, Verdict.FAIL), (1562, Verdict.PASS)]
    # 1625 / 1562 is within 5%, so 1562 is repeated, and its repeat fails: a flip.
    scripted += [(1562, Verdict.FAIL)]
    # The bracket is now [1500, 1562], within 5%: 1500 is repeated instead.
    scripted += [(1500, Verdict.PASS), (1500, Verdict.PASS)]
    history: list[StepRecord] = []
    for level, verdict in scripted:
        action = next_action(search, TRIAL, history)
        # Attempts count the trials at each level: the repeats are attempts 2 and 3.
        tried = sum(1 for r in history if r.level == level)
        assert action == NextTrial(level, TrialKind.FULL, 60.0, tried + 1)
        history.append(record(len(history), action, verdict))
    finished = next_action(search, TRIAL, history)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    assert (ceiling.level, ceiling.high, ceiling.flipped) == (1500, 1562, (1562,))
    assert ceiling.spread == (1500, 1500, 1500)
    assert "passed then failed" in ceiling.to_status("rps").stop_reason


def test_probe_narrows_with_short_trials_and_confirms_at_full_length() -> None:
    search = Search(strategy=Strategy.PROBE, start=1000, precision=0.05, repeats=2)
    result = run(search, TRIAL, SimTarget(capacity=3000))
    probes = [r.level for r in result.history if r.kind is TrialKind.PROBE]
    assert probes == [1000, 2000, 4000, 3000, 3500, 3250, 3125]
    assert all(r.duration == 12.0 for r in result.history if r.kind is TrialKind.PROBE)
    # The low end confirmed, the high end confirmed, then the repeats.
    assert full_levels(result.history) == [3000, 3125, 3000, 3000]
    ceiling = result.finished.ceiling
    assert (ceiling.level, ceiling.high, ceiling.complete) == (3000, 3125, True)


def test_probe_falls_back_when_a_full_trial_fails_where_a_probe_passed() -> None:
    # Short trials see 8% more capacity than full-length ones.
    target = SimTarget(capacity=3000, probe_bias=0.1)
    search = Search(strategy=Strategy.PROBE, start=1000, precision=0.05, repeats=1)
    result = run(search, TRIAL, target)
    ceiling = result.finished.ceiling
    assert ceiling.complete
    assert ceiling.level is not None
    assert 3000 / 1.05 <= ceiling.level <= 3000
    failed_full = {
        r.level for r in result.history if r.kind is TrialKind.FULL and r.verdict is Verdict.FAIL
    }
    assert failed_full, "the optimistic probes should have been caught at full length"
    assert ceiling.level not in failed_full


def test_probe_duration_comes_from_the_spec_when_given() -> None:
    search = Search(strategy=Strategy.PROBE, probe_duration=5.0)
    action = next_action(search, TRIAL, [])
    assert action == NextTrial(100, TrialKind.PROBE, 5.0)


def test_steps_runs_its_list_in_order_and_reports_the_highest_pass_below_a_failure() -> None:
    search = Search(strategy=Strategy.STEPS, levels=[500, 1000, 4000, 2000])
    result = run(search, TRIAL, SimTarget(capacity=2500))
    assert [r.level for r in result.history] == [500, 1000, 4000, 2000]
    ceiling = result.finished.ceiling
    assert (ceiling.level, ceiling.high, ceiling.complete) == (2000, 4000, True)


def test_steps_skips_levels_above_the_limit_and_says_so() -> None:
    search = Search(strategy=Strategy.STEPS, levels=[500, 9000], limit=5000, start=100)
    result = run(search, TRIAL, SimTarget(capacity=2500))
    assert [r.level for r in result.history] == [500]
    assert "9000" in result.finished.ceiling.stop_reason
