"""The pure e-divisive means against Apache Otava's own (`otava.change_point_divisive`, a
test-only install: see the Makefile), on synthetic histories with known breaks.

Two levels of agreement. The candidate a round picks (the split point and its Q) is
arithmetic, so it must match Otava's exactly on any series and any pieces. The
permutation test draws from a generator: given numpy's, seeded as Otava seeds its own,
ours draws the same shuffles in the same order, and then the change indices and
p-values must be Otava's exactly, near the threshold too (with ties counted alike:
`TieAwareTester`). The gate's own generator (Python's) must find the known breaks, and
none where there is none."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from otava.change_point_divisive.calculator import PairDistanceCalculator
from otava.change_point_divisive.detector import ChangePointDetector
from otava.change_point_divisive.significance_test import PermutationsSignificanceTester

from plimsoll.decide.changepoint import _candidate, e_divisive

SIGNIFICANCE, PERMUTATIONS = 0.01, 200  # the gate's defaults (api/gate.py Regression)


def noisy(levels: list[float], noise: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-noise, noise)) for level in levels]


def step(runs: int, at: int, change: float, noise: float = 0.03, seed: int = 1) -> list[float]:
    return noisy([1000 * (1 + change if i >= at else 1) for i in range(runs)], noise, seed)


def drift(runs: int, per_run: float, noise: float = 0.03, seed: int = 1) -> list[float]:
    return noisy([1000 * (1 + per_run) ** i for i in range(runs)], noise, seed)


class TieAwareTester(PermutationsSignificanceTester):  # type: ignore[misc]  # untyped
    """Otava's permutation test, counting a shuffle whose Q ties the candidate's as a hit.

    Q depends only on which points fall either side of a split, so a shuffle that keeps
    them there ties exactly; Otava compares the two floats as summed in different orders,
    so such a tie counts or not by the last bit. Ours counts it (the test's >=). The draws,
    the Q of every shuffle and the detector stay Otava's; only the count is redone."""

    def change_point(self, candidate: Any, series: Any, intervals: Any) -> Any:
        point = super().change_point(candidate, series, intervals)
        qhat = float(candidate.qhat)
        hits = int(np.sum(point.stats.permuted_qhats >= qhat - 1e-9 * abs(qhat)))
        point.stats.extreme_qhat_perm = hits
        point.stats.pvalue = hits / (self.permutations + 1)
        return point


def _otava(series: list[float], significance: float, seed: int) -> list[Any]:
    """Otava's changes from its original e-divisive with the permutation test, as many
    shuffles as the gate makes."""
    tester = TieAwareTester(
        max_pvalue=significance,
        permutations=PERMUTATIONS,
        calculator=PairDistanceCalculator,
        seed=seed,
    )
    detector = ChangePointDetector(significance_tester=tester, calculator=PairDistanceCalculator)
    return detector.get_change_points(series)


def numpy_shuffle(seed: int) -> Callable[[list[float]], None]:
    """Shuffle a piece with numpy's generator seeded as Otava seeds its own: the same draws
    in the same order give the same permutations, so the same p-values."""
    rng = np.random.default_rng(seed)

    def shuffle(piece: list[float]) -> None:
        array = np.array(piece)
        rng.shuffle(array)
        piece[:] = array.tolist()

    return shuffle


def same_as_otava(series: list[float], significance: float = SIGNIFICANCE) -> list[int]:
    """Otava's change indices, after checking that ours, on the same shuffles, finds the
    same ones with the same p-values."""
    theirs = _otava(series, significance, seed=0)
    ours = e_divisive(
        series, significance=significance, permutations=PERMUTATIONS, shuffle=numpy_shuffle(0)
    )
    assert [s.index for s in ours] == [int(p.index) for p in theirs]
    assert [s.pvalue for s in ours] == pytest.approx([float(p.stats.pvalue) for p in theirs])
    return [s.index for s in ours]


def gates(series: list[float], significance: float = SIGNIFICANCE) -> list[int]:
    """The change indices with the gate's own generator (Python's, seeded)."""
    found = e_divisive(series, significance=significance, permutations=PERMUTATIONS)
    return [s.index for s in found]


@pytest.mark.parametrize("seed", range(40))
def test_the_candidate_is_otavas_on_any_series_and_pieces(seed: int) -> None:
    rng = random.Random(seed)
    length = rng.randint(2, 50)
    series = [rng.choice([100.0, 90.0, 130.0]) + rng.gauss(0, 8) for _ in range(length)]
    cuts = sorted(rng.sample(range(1, length), k=min(rng.randint(0, 3), length - 1)))
    edges = [0, *cuts, length]
    pieces = [(a, b) for a, b in itertools.pairwise(edges) if a != b]
    if all(b - a < 2 for a, b in pieces):
        pytest.skip("no piece long enough to split")  # only for a degenerate draw
    theirs = PairDistanceCalculator(np.array(series)).get_next_candidate(
        [slice(a, b) for a, b in pieces]
    )
    index, qhat = _candidate(series, pieces)
    assert index == theirs.index
    assert qhat == pytest.approx(float(theirs.qhat), rel=1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_a_ten_percent_step_in_three_percent_noise_is_found_where_it_is(seed: int) -> None:
    series = step(20, at=14, change=-0.10, seed=seed)
    assert gates(series) == [14]
    # Otava's draw sometimes adds a split inside the noise before the step, at p ~ 0.01:
    # ours on the same draw must add it too.
    assert 14 in same_as_otava(series)


@pytest.mark.parametrize("seed", range(5))
def test_two_steps_are_both_found_as_otava_finds_them(seed: int) -> None:
    levels = [1000.0] * 10 + [880.0] * 10 + [1000.0] * 10
    series = noisy(levels, 0.03, seed=seed)
    assert gates(series) == [10, 20]
    assert same_as_otava(series) == [10, 20]


@pytest.mark.parametrize("seed", range(6))
def test_a_slow_drift_is_found_as_otava_finds_it(seed: int) -> None:
    # -3% a run over 20 runs: no run drops 10% below the one before, yet the history moved.
    series = drift(20, per_run=-0.03, seed=seed)
    same_as_otava(series)  # which later splits pass is close to the threshold: the same draw
    found = gates(series)
    assert found  # at least one change, inside the series, each one downward
    assert all(0 < i < 20 for i in found)
    edges = [0, *found, 20]
    means = [sum(series[a:b]) / (b - a) for a, b in itertools.pairwise(edges)]
    assert all(later < earlier for earlier, later in itertools.pairwise(means))


@pytest.mark.parametrize("seed", range(10))
def test_no_change_gives_no_break(seed: int) -> None:
    series = noisy([1000.0] * 20, 0.03, seed=seed)
    assert gates(series) == []
    assert same_as_otava(series) == []


@pytest.mark.parametrize("seed", range(10))
def test_random_histories_split_as_otavas_do_on_the_same_draws(seed: int) -> None:
    rng = random.Random(100 + seed)
    levels = [rng.choice([1000.0, 900.0, 1100.0])] * 6
    for _ in range(rng.randint(1, 4)):
        levels += [levels[-1] * rng.uniform(0.85, 1.15)] * rng.randint(2, 8)
    same_as_otava(noisy(levels, 0.03, seed), significance=0.05)


def test_the_same_history_always_gives_the_same_answer() -> None:
    series = drift(15, per_run=-0.02, seed=3)
    first = e_divisive(series, significance=0.05, permutations=100)
    assert e_divisive(series, significance=0.05, permutations=100) == first


def test_short_and_flat_series_have_no_change() -> None:
    assert e_divisive([], significance=0.05, permutations=50) == []
    assert e_divisive([500.0], significance=0.05, permutations=50) == []
    assert e_divisive([500.0] * 12, significance=0.05, permutations=50) == []
