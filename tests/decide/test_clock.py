"""The clock rules of a synchronised start: an offset from the shortest round trip, a
refusal past 50 ms that names the generator and the fix, and a start on their clock."""

from __future__ import annotations

import pytest

from plimsoll.decide.clock import (
    MAX_OFFSET_SECONDS,
    START_LEAD_SECONDS,
    ClockOffset,
    ClockSample,
    offset_of,
    refusal,
    start_lead,
    start_on_their_clock,
)

URL = "http://10.0.0.7:8089"


def test_the_offset_comes_from_the_reading_with_the_shortest_round_trip() -> None:
    # Their clock is 20 ms ahead. The slow reading (its answer waited 300 ms on the way
    # back) would put it 130 ms behind; the 2 ms one gives 20 ms, give or take 1 ms.
    samples = [
        ClockSample(sent=100.000, theirs=100.021, received=100.302),
        ClockSample(sent=101.000, theirs=101.021, received=101.002),
        ClockSample(sent=102.000, theirs=102.030, received=102.020),
    ]
    clock = offset_of(samples)
    assert clock.offset == pytest.approx(0.020)
    assert clock.uncertainty == pytest.approx(0.001)
    assert clock.round_trip == pytest.approx(0.002)


def test_no_readings_is_an_error_not_an_offset_of_zero() -> None:
    with pytest.raises(ValueError, match="no clock readings"):
        offset_of([])


def test_a_clock_within_50_ms_either_way_joins() -> None:
    assert refusal(URL, ClockOffset(offset=0.049, uncertainty=0.001)) is None
    assert refusal(URL, ClockOffset(offset=-0.049, uncertainty=0.001)) is None


def test_a_clock_off_by_more_is_refused_naming_the_generator_the_offset_and_the_fix() -> None:
    ahead = refusal(URL, ClockOffset(offset=0.073, uncertainty=0.002))
    assert ahead is not None
    assert ahead.startswith(f"generator {URL}'s clock is 73 ms ahead of the runner's")
    assert "within 50 ms" in ahead
    assert "chrony" in ahead
    behind = refusal(URL, ClockOffset(offset=-0.2, uncertainty=0.002))
    assert behind is not None
    assert "200 ms behind" in behind


def test_a_clock_that_cannot_be_read_to_within_50_ms_is_refused_too() -> None:
    why = refusal(URL, ClockOffset(offset=0.0, uncertainty=0.060))
    assert why is not None
    assert "shortest round trip took 120 ms" in why
    assert MAX_OFFSET_SECONDS == 0.050


def test_the_start_is_sent_on_the_generators_own_clock() -> None:
    # Their clock reads 30 ms more than ours at any moment: our 1000.0 is their 1000.03.
    assert start_on_their_clock(1000.0, ClockOffset(offset=0.030, uncertainty=0.001)) == (
        pytest.approx(1000.030)
    )
    assert start_on_their_clock(1000.0, ClockOffset(offset=-0.010, uncertainty=0.001)) == (
        pytest.approx(999.990)
    )


def test_the_lead_leaves_time_for_every_request_to_arrive() -> None:
    quick = [ClockOffset(offset=0.0, uncertainty=0.0005)] * 2
    slow = [ClockOffset(offset=0.0, uncertainty=0.020)] * 4  # 40 ms round trips, a proxy
    assert start_lead(quick) == pytest.approx(START_LEAD_SECONDS + 4 * 0.002)
    assert start_lead(slow) == pytest.approx(START_LEAD_SECONDS + 4 * 0.16)
    assert start_lead(slow) > start_lead(quick)
