"""Where a series of measurements moved: e-divisive means with a permutation test.

The divisive estimator of Matteson and James (2014), as Apache Otava (orion, Hunter)
runs it in its original form: split the series where the energy distance between the
points before and after a split point is largest, keep the split when a permutation
test says chance rarely makes a split that strong, then look for the next one inside
the pieces, until a candidate is not significant.

Used by the regression gate's `changepoint` method (`plimsoll.decide.changepoint_gate`)
over each variant's ceilings in `status.history`. Pure: floats in, splits out, no I/O
and no numpy (the operator image has no room for numpy and scipy); the shuffles come
from a seeded `random.Random`, so one history always gives the same answer.
`tests/decide/test_changepoint.py` holds it to Otava's own implementation on the same
series.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_TIE = 1e-9  # relative: two Q values this close are the same split summed differently


@dataclass(frozen=True)
class Split:
    index: int  # the first point after the change
    qhat: float  # the scaled energy distance that chose it
    pvalue: float  # the permutation test's: the share of shuffles that split as strongly


class _Distances:
    """|x_i - x_j| summed over runs of rows: `column(c, a, b)` is sum of d(i, c), a <= i < b.

    One prefix sum per column makes each sum O(1), so the best split of an interval of
    length L costs O(L^2) instead of the O(L^4) of summing every pair afresh."""

    def __init__(self, series: Sequence[float]) -> None:
        self._prefix: list[list[float]] = []
        for c_value in series:
            sums, total = [0.0], 0.0
            for value in series:
                total += abs(value - c_value)
                sums.append(total)
            self._prefix.append(sums)

    def column(self, c: int, a: int, b: int) -> float:
        sums = self._prefix[c]
        return sums[b] - sums[a]


def _best_in(dist: _Distances, start: int, end: int) -> tuple[int, float]:
    """The split point tau and its Q over series[start:end]: Q(tau, kappa) compares
    X = series[start:tau] with Y = series[tau:kappa],

        Q = 2/(m+n) sum|X-Y|
            - 2m/((m+n)(n-1)) sum_{i<k}|X_i-X_k| - 2n/((m+n)(m-1)) sum_{j<k}|Y_j-Y_k|

    (n = |X|, m = |Y|; a within-term of a single point is 0), maximised over both; the
    first maximum in (tau, kappa) order wins, as numpy's argmax picks it in Otava."""
    best_tau, best_q = start + 1, float("-inf")
    within_x = 0.0  # sum over pairs inside X, grown as tau moves right
    for tau in range(start + 1, end):
        n = tau - start
        within_x += dist.column(tau - 1, start, tau - 1)
        between = within_y = 0.0
        for kappa in range(tau + 1, end + 1):
            m = kappa - tau
            newest = kappa - 1  # the point Y just took in
            between += dist.column(newest, start, tau)
            within_y += dist.column(newest, tau, newest)
            q = 2.0 / (m + n) * between
            if n > 1:
                q -= 2.0 * m / ((m + n) * (n - 1)) * within_x
            if m > 1:
                q -= 2.0 * n / ((m + n) * (m - 1)) * within_y
            if q > best_q:
                best_tau, best_q = tau, q
    return best_tau, best_q


def _intervals(splits: Sequence[int], length: int) -> list[tuple[int, int]]:
    edges = [0, *sorted(splits), length]
    return [(a, b) for a, b in itertools.pairwise(edges) if a != b]


def _candidate(series: Sequence[float], intervals: Sequence[tuple[int, int]]) -> tuple[int, float]:
    """The strongest split over all pieces long enough to split (the first on a tie)."""
    dist = _Distances(series)
    best: tuple[int, float] | None = None
    for start, end in intervals:
        if end - start > 1:
            found = _best_in(dist, start, end)
            if best is None or found[1] > best[1]:
                best = found
    assert best is not None  # the caller checked that a piece of two points exists
    return best


def e_divisive(
    series: Sequence[float],
    *,
    significance: float,
    permutations: int,
    seed: int = 0,
    shuffle: Callable[[list[float]], None] | None = None,
) -> list[Split]:
    """The significant changes in `series`, by index. A candidate is significant when at
    most `significance` of `permutations` shuffles (each piece shuffled within itself, as
    the pieces stand before the candidate) reach its Q: p = hits / (permutations + 1).

    `shuffle` shuffles one piece in place (default: a `random.Random(seed)`'s); the pieces
    are drawn in Otava's order, so its generator here gives its answer to the draw."""
    values = [float(v) for v in series]
    shuffle = shuffle or random.Random(seed).shuffle
    found: list[Split] = []
    while True:
        intervals = _intervals([s.index for s in found], len(values))
        if all(end - start < 2 for start, end in intervals):
            break
        index, qhat = _candidate(values, intervals)
        hits = 0
        for _ in range(permutations):
            shuffled = list(values)
            for start, end in intervals:
                piece = shuffled[start:end]
                shuffle(piece)
                shuffled[start:end] = piece
            # Q depends only on which points fall either side, so a shuffle that keeps them
            # there ties exactly; summed in another order its Q may differ in the last bits.
            if _candidate(shuffled, intervals)[1] >= qhat - _TIE * abs(qhat):
                hits += 1
        pvalue = hits / (permutations + 1)
        if pvalue > significance:
            break
        found.append(Split(index, qhat, pvalue))
    return sorted(found, key=lambda s: s.index)
