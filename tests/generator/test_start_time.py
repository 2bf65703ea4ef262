"""A generator begins its trial at `startAt` on its own clock: not before, built first,
late only when the request came late, and a start a minute away is refused."""

from __future__ import annotations

import time

from plimsoll.api.trial import TrialState
from tests.generator.helpers import request, run
from tests.generator.target import TargetState

CLOSED = {"model": "users", "mix": [{"name": "w", "path": "/w"}]}


async def test_the_first_request_leaves_at_the_start_time_not_when_asked(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    asked_at, asked_wall = time.monotonic(), time.time()
    result = await run(request(url, CLOSED, level=1, duration=0.3, startAt=asked_wall + 0.4))
    assert result.state is TrialState.DONE, result.errors
    first = min(when for when, _, _ in state.arrivals)
    # Not before the start (the loop may wake a few ms late, never early).
    assert 0.39 <= first - asked_at < 0.6, first - asked_at
    assert result.started_late_seconds < 0.05
    assert not [e for e in result.errors if "after the trial's start time" in e]


async def test_a_start_time_already_past_begins_at_once_and_says_how_late(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    result = await run(request(url, CLOSED, level=1, duration=0.3, startAt=time.time() - 0.3))
    assert result.state is TrialState.DONE, result.errors
    assert 0.3 <= result.started_late_seconds < 0.5
    [late] = [e for e in result.errors if "after the trial's start time" in e]
    assert late.startswith("began 3")  # 300-something ms
    assert state.arrivals


async def test_a_start_a_minute_or_more_ahead_is_refused_before_any_load(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    result = await run(request(url, CLOSED, level=1, duration=0.3, startAt=time.time() + 120))
    assert result.state is TrialState.FAILED
    assert "startAt is 120 s ahead of this generator's clock" in result.errors[0]
    assert state.arrivals == []
