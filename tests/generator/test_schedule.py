from __future__ import annotations

import itertools
import random

import pytest

from plimsoll.api.workload import Arrival
from plimsoll_generator.schedule import Schedule


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
