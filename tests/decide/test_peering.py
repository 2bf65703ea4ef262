"""The peering priority: seniority wins, ties are broken, the number stays exact in JSON."""

from __future__ import annotations

from plimsoll.decide.peering import MAX_PRIORITY, seniority_priority


def test_the_earlier_operator_outranks_the_later_one() -> None:
    first = seniority_priority(1_764_558_000.000, tie_break=0)
    later = seniority_priority(1_764_558_000.001, tie_break=99)  # a millisecond later
    assert first > later


def test_starts_in_the_same_millisecond_are_told_apart_by_the_tie_break() -> None:
    assert seniority_priority(1_764_558_000.0, 3) != seniority_priority(1_764_558_000.0, 4)
    assert seniority_priority(1_764_558_000.0, 103) == seniority_priority(1_764_558_000.0, 3)


def test_priorities_are_positive_and_exact_as_json_numbers() -> None:
    for started in (0.0, 1_764_558_000.0, 9_999_999_999.999, -5.0, 1e12):
        priority = seniority_priority(started, 7)
        assert 0 < priority <= MAX_PRIORITY < 2**53
