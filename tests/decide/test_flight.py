"""A flight's figures from its timeline, worked by hand (issue 57).

The target carries 100 rps per pod. The flight: 10 s at 200 rps on 2 pods, then a burst
to 500 rps; the autoscaler wants 5 pods from t=15 s; the third pod is ready at t=25 s,
the fourth and fifth at t=35 s; p99 is over the 200 ms bar from t=10 to t=35 s
(25 s) while the carried load trails the offered; 60 of the 19,500 requests sent
(the offered rate times each 5 s slice) fail. By hand:
short of capacity at t=10 s (500 > 2 x 100); lags 15 s (3 pods ready at the end of the
slice that starts at 20 s) and 25 s (4 and 5 pods); back within the bar and keeping up
from t=35 s: time to capacity 25 s.
"""

from __future__ import annotations

import pytest

from plimsoll.api.autoscale import FlightResult, PodLag
from plimsoll.decide.flight import FlightSlice, measure, needed

BAR_MS = 200.0


def _slice(at: float, offered: float, achieved: float, p99: float, ready: int, desired: int,
           failed: int = 0) -> FlightSlice:  # fmt: skip
    sent = round(offered * 5)
    return FlightSlice(at, 5.0, offered, achieved, p99, ready, desired, sent, failed)


BURST = [
    _slice(0, 200, 200, 50, 2, 2),
    _slice(5, 200, 200, 50, 2, 2),
    _slice(10, 500, 210, 900, 2, 2, failed=20),
    _slice(15, 500, 220, 950, 2, 5, failed=20),
    _slice(20, 500, 300, 600, 3, 5, failed=10),
    _slice(25, 500, 330, 400, 3, 5, failed=10),
    _slice(30, 500, 480, 250, 5, 5),
    _slice(35, 500, 500, 80, 5, 5),
    _slice(40, 500, 500, 70, 5, 5),
]


def _measure(slices: list[FlightSlice], profile: str = "a burst") -> FlightResult:
    return measure(slices, per_pod=100, bar_ms=BAR_MS, max_failed_share=0.001, profile=profile)


def test_a_burst_the_autoscaler_is_late_for() -> None:
    flight = _measure(BURST, "a burst from 200 to 500 rps")
    assert flight.short_at == 10
    assert flight.lags == [
        PodLag(replicas=3, lag_s=15),
        PodLag(replicas=4, lag_s=25),
        PodLag(replicas=5, lag_s=25),
    ]
    assert flight.time_to_capacity_s == 25
    assert flight.seconds_over_bar == 25  # t=10..35: five slices over 200 ms
    assert (flight.sent, flight.failed) == (19500, 60)
    assert flight.failed_share == pytest.approx(60 / 19500)
    assert (flight.start_replicas, flight.peak_replicas) == (2, 5)
    assert not flight.held
    assert flight.sentence == (
        "a burst from 200 to 500 rps: 2 → 5 pods in 25 s; p99 over the bar for 25 s; "
        "back within the bar 25 s after; 60 requests failed (0.3%); it did not hold"
    )


def test_enough_pods_from_the_start_holds_and_counts_the_idle_ones() -> None:
    steady = [_slice(t, 200, 200, 50, 5, 5) for t in range(0, 60, 5)]
    flight = _measure(steady, "200 rps held")
    assert flight.short_at is None
    assert flight.lags == []
    assert flight.time_to_capacity_s == 0
    assert flight.held
    # 3 pods beyond the 2 that 200 rps needs, for 60 s: 3 pod-minutes
    assert flight.over_provisioned_pod_minutes == pytest.approx(3.0)
    assert "never short of capacity" in flight.sentence


def test_never_back_within_the_bar() -> None:
    stuck = [_slice(0, 200, 200, 50, 2, 2), *(_slice(t, 500, 200, 900, 2, 2) for t in (5, 10))]
    flight = _measure(stuck)
    assert flight.time_to_capacity_s is None
    assert flight.lags == []
    assert "no pod was added" in flight.sentence
    assert "never back within the bar" in flight.sentence


def test_failed_calls_count_as_slower_than_any_answer() -> None:
    # A queue past the timeout: few calls answered, quickly; the rest timed out.
    silent = FlightSlice(10, 5.0, 500, 0, None, 2, 2, 2500, 400)  # none answered
    fast_few = FlightSlice(15, 5.0, 500, 20, 40, 2, 2, 2500, 300)  # 100 answered in 40 ms
    one_in_200 = FlightSlice(20, 5.0, 500, 398, 40, 2, 2, 2500, 10)  # 0.5% failed: within
    idle = FlightSlice(25, 5.0, 0, 0, None, 2, 2, 0, 0)  # nothing sent, nothing failed
    slices = [_slice(0, 200, 200, 50, 2, 2), _slice(5, 500, 200, 900, 2, 2)]
    flight = _measure([*slices, silent, fast_few, one_in_200, idle])
    assert flight.seconds_over_bar == 15  # the slow slice, the silent one, the fast few
    assert not flight.held


def test_a_turn_of_the_wanted_count_within_the_window_is_a_flap() -> None:
    wanted = [5, 5, 3, 3, 5, 5, 3]  # down at 10 s, up at 20 s, down at 30 s
    slices = [_slice(5 * i, 300, 300, 50, 5, d) for i, d in enumerate(wanted)]
    assert _measure(slices).flaps == 2
    # The same turns, 400 s apart, are a day's traffic, not flapping.
    spread = [_slice(400 * i, 300, 300, 50, 5, d) for i, d in enumerate(wanted)]
    assert _measure(spread).flaps == 0


def test_the_replicas_a_load_needs() -> None:
    assert needed(200, 100) == 2
    assert needed(201, 100) == 3
    assert needed(0, 100) == 1


def test_a_flight_needs_slices_and_a_ceiling() -> None:
    with pytest.raises(ValueError, match="at least one slice"):
        _measure([])
    with pytest.raises(ValueError, match="positive"):
        measure(BURST, per_pod=0, bar_ms=BAR_MS, max_failed_share=0.001, profile="a burst")
