from __future__ import annotations

import itertools
import random

import pytest

from plimsoll.api.workload import Arrival
from plimsoll.shared.rate_profile import RateProfile
from plimsoll_generator.schedule import ProfiledSchedule, Schedule


def test_uniform_starts_are_evenly_spaced_without_drift() -> None:
    schedule = Schedule(5000.0, Arrival.UNIFORM, random.Random(1))
    times = schedule.take_until(10.0)
    assert len(times) == 50_001  # 0, 0.0002, ..., 10.0
    assert times[12_345] == pytest.approx(12_345 / 5000.0, abs=1e-12)


def test_poisson_starts_match_the_rate_and_have_exponential_gaps() -> None:
    schedule = Schedule(1000.0, Arrival.POISSON, random.Random(7))
    times = schedule.take_until(100.0)
    assert len(times) == pytest.approx(100_000, rel=0.02)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # An exponential's coefficient of variation is one; a uniform schedule's is zero.
    mean = sum(gaps) / len(gaps)
    sd = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5
    assert sd / mean == pytest.approx(1.0, rel=0.05)


def test_batches_take_only_what_is_due() -> None:
    schedule = Schedule(100.0, Arrival.UNIFORM, random.Random(1))
    assert len(schedule.take_until(0.0995)) == 10
    assert schedule.take_until(0.0999) == []
    assert schedule.next_time == pytest.approx(0.1)


def test_a_zero_rate_never_starts() -> None:
    assert Schedule(0.0, Arrival.POISSON, random.Random(1)).take_until(1e9) == []


# 10 s at a fifth of the rate, a 10 s ramp to all of it, 20 s held, a step back (issue 57).
BURST = RateProfile.of([(0, 0.2), (10, 0.2), (20, 1.0), (40, 1.0), (40, 0.2)])


def _per_window(times: list[float]) -> list[int]:
    edges = [(0, 10), (10, 20), (20, 40), (40, 50)]
    return [sum(1 for t in times if a <= t < b) for a, b in edges]


def test_uniform_starts_follow_a_profile() -> None:
    times = ProfiledSchedule(1000.0, BURST, Arrival.UNIFORM, random.Random(1)).take_until(50.0)
    # the profile's integral by window, times 1,000/s: 2,000, 6,000, 20,000, 2,000
    assert _per_window(times) == [2000, 6000, 20000, 2000]
    assert times == sorted(times)


def test_poisson_starts_follow_a_profile_with_exponential_gaps_within_a_hold() -> None:
    times = ProfiledSchedule(1000.0, BURST, Arrival.POISSON, random.Random(3)).take_until(50.0)
    for counted, expected in zip(_per_window(times), [2000, 6000, 20000, 2000], strict=True):
        assert counted == pytest.approx(expected, rel=0.05)
    held = [t for t in times if 20 <= t < 40]
    gaps = [b - a for a, b in itertools.pairwise(held)]
    mean = sum(gaps) / len(gaps)
    sd = (sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5
    assert sd / mean == pytest.approx(1.0, rel=0.05)


def test_a_profile_that_stops_stops_the_starts() -> None:
    stop = RateProfile.of([(0, 1.0), (5, 1.0), (5, 0.0)])
    times = ProfiledSchedule(100.0, stop, Arrival.UNIFORM, random.Random(1)).take_until(1e6)
    assert len(times) == 501  # 0, 0.01, ..., 5.0: then nothing is due, ever
