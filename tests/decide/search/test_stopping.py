"""Retries and the range of a stopped variant, from the step history alone (issue 53):
a run resumed after an invalid step retries it as the original would have, and a probe's
pass is never the range's ceiling."""

from __future__ import annotations

from plimsoll.api.spec import Search, Strategy, Trial
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.search import NextTrial, next_action
from plimsoll.decide.search.stopping import (
    invalid_in_a_row,
    pending_retries,
    range_so_far,
    search_view,
)


def step(
    index: int, level: int, verdict: Verdict, attempt: int = 1, kind: TrialKind = TrialKind.FULL
) -> StepRecord:
    return StepRecord(
        index=index, level=level, verdict=verdict, duration=3.0, attempt=attempt, kind=kind
    )


SEARCH = Search(strategy=Strategy.STEPS, levels=[100, 200, 400], start=100, floor=1, limit=1000)
TRIAL = Trial(duration=3.0, warm_up=0.0)


def test_a_history_ending_in_an_unretried_invalid_step_resumes_into_its_retry() -> None:
    history = [step(0, 100, Verdict.PASS), step(1, 200, Verdict.INVALID)]
    pending = pending_retries(history, retry_on_more_generators=False)
    assert pending == 1
    action = next_action(SEARCH, TRIAL, search_view(history, pending))
    assert isinstance(action, NextTrial)
    assert action.level == 200  # the same level again, as the original run did next


def test_a_second_invalid_attempt_stops_unless_more_generators_would_run_it() -> None:
    history = [
        step(0, 100, Verdict.PASS),
        step(1, 200, Verdict.INVALID),
        step(2, 200, Verdict.INVALID, attempt=2),
    ]
    assert invalid_in_a_row(history) == 2
    assert pending_retries(history, retry_on_more_generators=False) == 0
    assert pending_retries(history, retry_on_more_generators=True) == 2
    assert pending_retries(history[:1], retry_on_more_generators=True) == 0  # nothing invalid


def test_invalid_steps_at_another_level_do_not_add_up() -> None:
    history = [step(0, 100, Verdict.INVALID), step(1, 100, Verdict.PASS, attempt=2)]
    history.append(step(2, 200, Verdict.INVALID))
    assert invalid_in_a_row(history) == 1


def test_a_probe_only_pass_never_becomes_the_ceiling() -> None:
    history = [
        step(0, 100, Verdict.PASS),
        step(1, 400, Verdict.PASS, kind=TrialKind.PROBE),
        step(2, 800, Verdict.FAIL, kind=TrialKind.PROBE),
    ]
    ceiling = range_so_far(history, "rps", "default", "the target died")
    assert (ceiling.level, ceiling.high, ceiling.complete) == (100, None, False)
    assert ceiling.stop_reason == "the target died"


def test_the_range_is_the_searchs_own_reading_of_a_flip() -> None:
    # 200 passed at full length above a full-length failure at 150: the search reads the
    # ceiling below the lowest failure, and so does a stopped variant's range.
    history = [
        step(0, 100, Verdict.PASS),
        step(1, 150, Verdict.FAIL),
        step(2, 200, Verdict.PASS),
    ]
    ceiling = range_so_far(history, "rps", "default", "stopped")
    assert (ceiling.level, ceiling.high) == (100, 150)
