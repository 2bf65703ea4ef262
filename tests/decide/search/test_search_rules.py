"""The rules every strategy shares: noisy repeats, invalid stops, max_trials."""

from __future__ import annotations

import pytest

from bench.simulated_targets import record
from plimsoll.api.spec import Search, Strategy, Trial
from plimsoll.api.step import LimitedBy, MarginalFigure, StepRecord, TrialKind, Verdict
from plimsoll.decide.search import Finished, NextTrial, next_action

TRIAL = Trial(duration=30.0)


def step(index: int, level: int, verdict: Verdict, kind: TrialKind = TrialKind.FULL) -> StepRecord:
    return record(index, NextTrial(level, kind, 30.0), verdict)


@pytest.mark.parametrize("strategy", list(Strategy))
def test_a_noisy_step_is_repeated_then_counts_as_invalid(strategy: Strategy) -> None:
    if strategy is Strategy.PROVE:
        search = Search(strategy=strategy, level=100)
    elif strategy is Strategy.AUTOSCALE:  # its level as planned from the profile's peak
        search = Search(strategy=Strategy.PROVE, level=100).model_copy(
            update={"strategy": strategy}
        )
    else:
        search = Search(strategy=strategy, levels=[100, 200], start=100)
    history = [step(0, 100, Verdict.NOISY, TrialKind.FULL)]
    if strategy is Strategy.PROBE:
        history = [step(0, 100, Verdict.NOISY, TrialKind.PROBE)]
    kind = history[0].kind
    for attempt in (2, 3):
        action = next_action(search, TRIAL, history, retries=2)
        assert isinstance(action, NextTrial)
        assert (action.level, action.kind, action.attempt) == (100, kind, attempt)
        history.append(step(len(history), 100, Verdict.NOISY, kind))
    finished = next_action(search, TRIAL, history, retries=2)
    assert isinstance(finished, Finished)
    assert "noisy 3 times" in finished.ceiling.stop_reason
    assert not finished.ceiling.complete


def test_a_noisy_step_that_then_passes_lets_the_search_go_on() -> None:
    search = Search(start=100)
    history = [step(0, 100, Verdict.NOISY), step(1, 100, Verdict.PASS)]
    assert next_action(search, TRIAL, history) == NextTrial(200, TrialKind.FULL, 30.0)


def test_an_invalid_step_stops_the_run_with_its_reason_and_the_range_so_far() -> None:
    search = Search(start=100)
    bad = step(2, 400, Verdict.INVALID)
    bad = bad.model_copy(update={"reasons": ["generator CPU 97% > 85%"]})
    history = [step(0, 100, Verdict.PASS), step(1, 200, Verdict.PASS), bad]
    finished = next_action(search, TRIAL, history)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    assert (ceiling.level, ceiling.high, ceiling.complete) == (200, None, False)
    assert "step 2 at level 400 was invalid: generator CPU 97% > 85%" in ceiling.stop_reason


def test_max_trials_stops_the_run_with_the_range_so_far() -> None:
    search = Search(start=100, max_trials=3)
    history = [step(0, 100, Verdict.PASS), step(1, 200, Verdict.PASS), step(2, 400, Verdict.FAIL)]
    finished = next_action(search, TRIAL, history)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    assert (ceiling.level, ceiling.low, ceiling.high, ceiling.complete) == (200, 200, 400, False)
    assert "max_trials (3)" in ceiling.stop_reason


def test_max_trials_does_not_hide_an_answer_found_on_the_last_trial() -> None:
    search = Search(start=100, repeats=0, max_trials=3, precision=0.5)
    history = [step(0, 100, Verdict.PASS), step(1, 200, Verdict.PASS), step(2, 300, Verdict.FAIL)]
    finished = next_action(search, TRIAL, history)
    assert isinstance(finished, Finished)
    assert finished.ceiling.complete
    assert finished.ceiling.level == 200


def test_to_status_carries_the_range_into_the_api_ceiling() -> None:
    history = [step(0, 100, Verdict.PASS), step(1, 200, Verdict.FAIL)]
    finished = next_action(Search(start=100, max_trials=2), TRIAL, history)
    assert isinstance(finished, Finished)
    status = finished.ceiling.to_status("rps", variant="pg")
    assert (status.level, status.low, status.high, status.unit) == (100, 100, 200, "rps")
    assert status.variant == "pg"
    assert not status.complete


def test_a_marginal_step_is_repeated_and_one_that_stays_marginal_moves_no_bracket_end() -> None:
    search = Search(strategy=Strategy.DOUBLING, start=100, precision=0.05, repeats=0)
    history = [step(0, 100, Verdict.PASS), step(1, 200, Verdict.FAIL)]
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(150, TrialKind.FULL, 30.0)
    history.append(step(2, 150, Verdict.MARGINAL))
    for attempt in (2, 3):
        action = next_action(search, TRIAL, history, retries=2)
        assert action == NextTrial(150, TrialKind.FULL, 30.0, attempt)
        history.append(step(len(history), 150, Verdict.MARGINAL))
    # 150 stayed marginal: the bisection goes on below it, as if it had failed.
    for level in (125, 137, 143):
        assert next_action(search, TRIAL, history, retries=2) == NextTrial(
            level, TrialKind.FULL, 30.0
        )
        history.append(step(len(history), level, Verdict.PASS))
    finished = next_action(search, TRIAL, history, retries=2)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    # The answer's ends are the real passes and fails: 143 passed, 200 is the first fail.
    assert (ceiling.level, ceiling.low, ceiling.high, ceiling.complete) == (143, 143, 200, True)
    assert "stayed marginal: about 150 (3 trials)" in ceiling.stop_reason


def test_a_climb_that_stays_marginal_narrows_below_it_instead_of_stopping() -> None:
    # bench/truth.py's Poisson case: 50 and 100 passed, 200 (the truth is 191) stayed
    # marginal; stopping there reported 100, half the capacity.
    search = Search(strategy=Strategy.DOUBLING, start=50, precision=0.05, repeats=0)
    history = [step(0, 50, Verdict.PASS), step(1, 100, Verdict.PASS)]
    history += [step(2, 200, Verdict.MARGINAL), step(3, 200, Verdict.MARGINAL)]
    assert next_action(search, TRIAL, history, retries=1) == NextTrial(150, TrialKind.FULL, 30.0)
    for level, verdict in ((150, Verdict.PASS), (175, Verdict.PASS), (187, Verdict.FAIL)):
        assert next_action(search, TRIAL, history, retries=1) == NextTrial(
            level, TrialKind.FULL, 30.0
        )
        history.append(step(len(history), level, verdict))
    assert next_action(search, TRIAL, history, retries=1) == NextTrial(181, TrialKind.FULL, 30.0)
    history.append(step(len(history), 181, Verdict.PASS))
    finished = next_action(search, TRIAL, history, retries=1)
    assert isinstance(finished, Finished)
    assert (finished.ceiling.level, finished.ceiling.high) == (181, 187)
    assert finished.ceiling.complete


def test_a_marginal_step_that_then_passes_counts_as_the_pass() -> None:
    search = Search(strategy=Strategy.DOUBLING, start=100, precision=0.05, repeats=0)
    history = [
        step(0, 100, Verdict.PASS),
        step(1, 200, Verdict.FAIL),
        step(2, 150, Verdict.MARGINAL),
        step(3, 150, Verdict.PASS),
    ]
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(175, TrialKind.FULL, 30.0)


def test_a_list_whose_every_level_passed_answers_at_least_not_a_ceiling() -> None:
    # The LLM-proxy example passed 5 to 320 users and reported "sustains 320, cpu limited
    # it" as complete: nothing had shown where it stops.
    search = Search(strategy=Strategy.STEPS, levels=[5, 10, 20])
    history = [step(i, level, Verdict.PASS) for i, level in enumerate((5, 10, 20))]
    finished = next_action(search, TRIAL, history)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    assert (ceiling.level, ceiling.high, ceiling.complete) == (20, None, False)
    assert ceiling.every_level_passed
    assert ceiling.stop_reason.startswith("every level passed")
    status = ceiling.to_status("users", limited_by=LimitedBy.CPU)
    assert (status.complete, status.limited_by) == (False, LimitedBy.UNKNOWN)
    assert status.every_level_passed
    # One failing level above the pass makes it a ceiling again.
    history.append(step(3, 40, Verdict.FAIL))
    search = Search(strategy=Strategy.STEPS, levels=[5, 10, 20, 40])
    finished = next_action(search, TRIAL, history)
    assert isinstance(finished, Finished)
    assert (finished.ceiling.level, finished.ceiling.high) == (20, 40)
    assert finished.ceiling.complete
    assert not finished.ceiling.every_level_passed


def test_a_run_stopped_early_before_any_failure_is_not_every_level_passed() -> None:
    search = Search(strategy=Strategy.STEPS, levels=[5, 10, 20])
    bad = step(1, 10, Verdict.INVALID).model_copy(update={"reasons": ["generator died"]})
    finished = next_action(search, TRIAL, [step(0, 5, Verdict.PASS), bad])
    assert isinstance(finished, Finished)
    assert (finished.ceiling.level, finished.ceiling.high) == (5, None)
    assert not finished.ceiling.every_level_passed
    assert not finished.ceiling.to_status("users").every_level_passed


def test_doubling_at_its_limit_says_every_level_passed() -> None:
    search = Search(strategy=Strategy.DOUBLING, start=100, limit=200, repeats=0)
    history = [step(0, 100, Verdict.PASS), step(1, 200, Verdict.PASS)]
    finished = next_action(search, TRIAL, history)
    assert isinstance(finished, Finished)
    assert finished.ceiling.stop_reason.startswith("every level passed")
    assert finished.ceiling.to_status("rps").complete is False
    assert finished.ceiling.to_status("rps").every_level_passed


def test_a_level_marginal_below_a_higher_pass_does_not_end_the_search() -> None:
    # The edge example: 800 stayed marginal, then 1,600 passed; the run stopped with a
    # range only. The pass above says the target carries 800: the list goes on.
    search = Search(strategy=Strategy.STEPS, levels=[400, 800, 1600, 3200])
    history = [step(0, 400, Verdict.PASS)]
    history += [step(i, 800, Verdict.MARGINAL) for i in (1, 2, 3)]
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(1600, TrialKind.FULL, 30.0)
    history.append(step(4, 1600, Verdict.PASS))
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(3200, TrialKind.FULL, 30.0)
    history.append(step(5, 3200, Verdict.FAIL))
    finished = next_action(search, TRIAL, history, retries=2)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    assert (ceiling.level, ceiling.low, ceiling.high, ceiling.complete) == (1600, 1600, 3200, True)
    # A pass above a failure does not carry the marginal level: it stays read as failed.
    flipped = [step(0, 400, Verdict.PASS)]
    flipped += [step(i, 800, Verdict.MARGINAL) for i in (1, 2, 3)]
    flipped += [step(4, 1600, Verdict.FAIL), step(5, 3200, Verdict.PASS)]
    finished = next_action(search, TRIAL, flipped, retries=2)
    assert isinstance(finished, Finished)
    assert finished.ceiling.level == 400
    assert "stayed marginal: about 800 (3 trials)" in finished.ceiling.stop_reason


def marginal_step(index: int, level: int, p95_ms: float) -> StepRecord:
    figure = MarginalFigure(
        criterion="p95 ttft latency of chat", measured=p95_ms, bound=900.0, unit="ms"
    )
    return step(index, level, Verdict.MARGINAL).model_copy(update={"marginal": figure})


def test_one_bound_holds_a_level_whatever_mix_of_noisy_and_marginal_it_gets() -> None:
    # The LLM proxy's level 5 took eight trials (pass, noisy, pass, noisy, noisy, marginal,
    # marginal, pass) with attempts that restarted. Now: three unsettled trials a level
    # (retries=2), counted over the whole history, attempts counting up.
    search = Search(strategy=Strategy.DOUBLING, start=5, precision=0.05, repeats=2, limit=40)
    history = [step(0, 5, Verdict.PASS), step(1, 10, Verdict.FAIL)]
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(7, TrialKind.FULL, 30.0)
    history.append(step(2, 7, Verdict.NOISY))
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(7, TrialKind.FULL, 30.0, 2)
    history.append(marginal_step(3, 7, 873.0))
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(7, TrialKind.FULL, 30.0, 3)
    history.append(marginal_step(4, 7, 914.0))
    # 7 spent its three trials undecided: it is read as failed and never tried again;
    # the search goes on below it (6), then repeats 5 for the spread as attempts 2 and 3.
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(6, TrialKind.FULL, 30.0)
    history.append(step(5, 6, Verdict.FAIL))
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(5, TrialKind.FULL, 30.0, 2)
    history.append(step(6, 5, Verdict.NOISY))
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(5, TrialKind.FULL, 30.0, 3)
    history.append(step(7, 5, Verdict.PASS))
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(5, TrialKind.FULL, 30.0, 4)
    history.append(step(8, 5, Verdict.NOISY))
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(5, TrialKind.FULL, 30.0, 5)
    history.append(step(9, 5, Verdict.MARGINAL))
    # 5 has now had three unsettled trials: no more, the answer stands on two passes.
    finished = next_action(search, TRIAL, history, retries=2)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    assert (ceiling.level, ceiling.high, ceiling.spread) == (5, 6, (5, 5))
    assert ceiling.complete
    assert "level 5 took 3 noisy or marginal trials" in ceiling.stop_reason
    assert "the bound is 3 noisy or marginal trials a level" in ceiling.stop_reason
    assert all(sum(1 for r in history if r.level == lv) <= 5 for lv in (5, 6, 7, 10))


def test_a_level_that_stays_marginal_is_the_answers_uncertainty_with_its_figures() -> None:
    search = Search(strategy=Strategy.STEPS, levels=[3, 5, 7])
    history = [step(0, 3, Verdict.PASS), marginal_step(1, 5, 873.0)]
    history += [step(2, 5, Verdict.NOISY), marginal_step(3, 5, 914.0)]
    assert next_action(search, TRIAL, history, retries=2) == NextTrial(7, TrialKind.FULL, 30.0)
    history.append(step(4, 7, Verdict.FAIL))
    finished = next_action(search, TRIAL, history, retries=2)
    assert isinstance(finished, Finished)
    ceiling = finished.ceiling
    assert (ceiling.level, ceiling.high) == (3, 7)
    assert ceiling.stop_reason.startswith(
        "stayed marginal: about 5: p95 ttft latency of chat 873–914 ms around the 900 ms bar "
        "(3 trials)"
    )


def test_a_busy_level_is_inconclusive_after_its_bound_even_with_a_pass_between() -> None:
    # Noisy, then marginal-free repeats: only noisy verdicts and no pass at that level.
    search = Search(strategy=Strategy.DOUBLING, start=100)
    history = [step(0, 100, Verdict.PASS)]
    history += [step(i, 200, Verdict.NOISY) for i in (1, 2, 3)]
    finished = next_action(search, TRIAL, history, retries=2)
    assert isinstance(finished, Finished)
    assert finished.ceiling.inconclusive
    assert "was noisy 3 times" in finished.ceiling.stop_reason
