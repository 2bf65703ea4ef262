"""The steadiness rule on known p99 series."""

from __future__ import annotations

from plimsoll.decide.steadiness import steadiness


def test_a_flat_series_is_steady() -> None:
    result = steadiness([5.0, 5.2, 4.9, 5.1, 5.0, 5.3, 4.8, 5.1, 5.0])
    assert result is not None
    assert result.steady
    assert result.note == ""


def test_a_climbing_series_is_not_steady() -> None:
    result = steadiness([2.0, 2.5, 3.0, 3.6, 4.1, 4.8, 5.5, 6.0, 6.8])
    assert result is not None
    assert not result.steady
    assert "not steady" in result.note
    assert result.first_p99_ms == 2.5
    assert result.last_p99_ms == 6.0


def test_one_slow_slice_at_the_start_is_no_drift() -> None:
    # A cold start: high first, then flat. Falling is not drifting.
    result = steadiness([20.0, 5.0, 5.1, 5.0, 4.9, 5.2, 5.0, 5.1, 5.0])
    assert result is not None
    assert result.steady


def test_a_spike_in_the_middle_is_no_drift() -> None:
    result = steadiness([5.0, 5.1, 5.0, 30.0, 31.0, 29.0, 5.0, 5.2, 5.1])
    assert result is not None
    assert result.steady


def test_a_sub_millisecond_rise_at_low_latency_is_no_drift() -> None:
    # +60% but only 0.3 ms: below the absolute floor.
    result = steadiness([0.5, 0.5, 0.6, 0.6, 0.7, 0.7, 0.8, 0.8, 0.8])
    assert result is not None
    assert result.steady


def test_too_few_answered_slices_cannot_tell() -> None:
    assert steadiness([1.0, 2.0, 3.0, None, None, 9.0]) is None
    assert steadiness([]) is None


def test_empty_slices_are_skipped_not_counted_as_zero() -> None:
    result = steadiness([5.0, None, 5.1, 5.0, None, 5.2, 5.0, 5.1])
    assert result is not None
    assert result.steady
