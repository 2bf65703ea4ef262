"""Goodput judged per answer in the generator: a hand-checked set of answers through the
recorder's rule, and the compiled hot path against a real target whose answers are fast,
slow or refused by path, so which ones are good is known before the run."""

from __future__ import annotations

import math
from typing import Any

from plimsoll.api.trial import RequestBound, TrialState
from plimsoll.shared import histogram
from plimsoll_generator.recorder import OperationStats, Recorder
from tests.generator.helpers import request, run
from tests.generator.target import TargetState


def bound(operation: str, metric: str, within: float) -> RequestBound:
    return RequestBound(operation=operation, metric=metric, within=within)


def test_an_operation_keeps_the_strictest_bound_of_its_own_and_every_operations() -> None:
    bounds = [bound("*", "total", 0.5), bound("chat", "total", 0.2), bound("chat", "ttft", 0.1)]
    recorder = Recorder(["chat", "list"], bounds)
    chat, listing = recorder.ops["chat"], recorder.ops["list"]
    assert (chat.within, chat.ttft_within, chat.added_within) == (0.2, 0.1, math.inf)
    assert (listing.within, listing.ttft_within) == (0.5, math.inf)
    # An operation first seen mid-trial (an MCP call's name) gets its bounds too.
    assert recorder.op("later").within == 0.5


def test_a_hand_checked_set_of_answers_counts_only_those_within_every_bound() -> None:
    stats = OperationStats(None, [bound("*", "total", 0.100), bound("*", "ttft", 0.020)], "chat")
    answers = [
        # (total, ttft, added): -1 is "not measured"
        (0.050, 0.010, -1.0),  # good
        (0.100, 0.020, -1.0),  # good: bounds are inclusive
        (0.101, 0.010, -1.0),  # total over
        (0.050, 0.021, -1.0),  # ttft over
        (0.090, -1.0, -1.0),  # no first token: the ttft bound does not judge it; good
        (0.030, 0.005, 5.0),  # an added latency with no bound on it: good
    ]
    for total, ttft, added in answers:
        stats.judge(total, ttft, added)
    assert stats.good == 4
    assert stats.result().good == 4


def test_timed_judges_only_answers_of_the_expected_class() -> None:
    stats = OperationStats(None, [bound("get", "added", 0.002)], "get")
    stats.timed(0.010, 0.009, ok=True)  # added 1 ms: good
    stats.timed(0.010, 0.005, ok=True)  # added 5 ms: over
    stats.timed(0.010, None, ok=True)  # no Server-Timing: only the total judges it; good
    stats.timed(0.001, 0.001, ok=False)  # fast but a wrong status: never good
    assert stats.good == 2
    assert stats.latency.count() == 4


def test_with_one_bound_per_request_the_count_agrees_with_the_histogram() -> None:
    # One total bound judges every request: then the histogram can tell the good ones
    # too, and the per-answer count must agree with it. 950 answers at 5 ms, 30 at 80 ms.
    stats = OperationStats(None, [bound("*", "total", 0.050)], "api")
    for seconds in [0.005] * 950 + [0.080] * 30:
        stats.timed(seconds, None, ok=True)
    h = histogram.decode(stats.result().latency)
    within = sum(
        item.count_at_value_iterated_to
        for item in h.get_recorded_iterator()
        if item.value_iterated_to <= 50_000
    )
    assert stats.good == within == 950


WORKLOAD: dict[str, Any] = {
    "model": "users",
    "mix": [
        {"name": "fast", "path": "/fast"},
        {"name": "slow", "path": "/slow"},
        {"name": "refused", "path": "/busy"},  # 503: shed, fast but not good
    ],
}


async def test_the_hot_path_counts_fast_expected_answers_and_no_others(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    state.delays["/slow"] = 0.25
    bounds = [{"operation": "*", "metric": "total", "within": 0.1}]
    result = await run(request(url, WORKLOAD, level=4, duration=1.5, requestBounds=bounds))
    assert result.state is TrialState.DONE
    ops = result.operations
    assert ops["fast"].outcomes.ok > 5
    assert ops["slow"].outcomes.ok > 0
    assert ops["refused"].outcomes.shed > 0
    # Every fast answer is far inside 100 ms; every slow one is held 250 ms.
    assert ops["fast"].good == ops["fast"].outcomes.ok
    assert ops["slow"].good == 0
    assert ops["refused"].good == 0


async def test_an_operations_own_looser_bound_does_not_lift_the_shared_one(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    state.delays["/slow"] = 0.25
    loose = [{"operation": "slow", "metric": "total", "within": 1.0}]
    result = await run(request(url, WORKLOAD, level=4, duration=1.0, requestBounds=loose))
    slow = result.operations["slow"]
    assert slow.outcomes.ok > 0
    assert slow.good == slow.outcomes.ok
    shared = [*loose, {"operation": "*", "metric": "total", "within": 0.1}]
    result = await run(request(url, WORKLOAD, level=4, duration=1.0, requestBounds=shared))
    assert result.operations["slow"].good == 0  # '*' covers it too: the stricter holds
