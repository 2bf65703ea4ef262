"""Confidence intervals of quantiles (order statistics) and shares (Wilson)."""

from __future__ import annotations

import random

import pytest

from plimsoll.decide.confidence import (
    quantile_interval,
    quantile_ranks,
    share_interval,
    share_straddles,
    straddles,
)


def test_the_p99_of_ten_thousand_samples_rests_on_ranks_9880_to_9920() -> None:
    low, high = quantile_ranks(0.99, 10_000)
    assert low == pytest.approx(0.98805, abs=1e-4)
    assert high == pytest.approx(0.99195, abs=1e-4)
    # Fewer samples, a wider interval.
    few_low, few_high = quantile_ranks(0.99, 500)
    assert few_high - few_low > 4 * (high - low)


def test_the_interval_of_a_quantile_covers_the_true_one_about_95_percent_of_the_time() -> None:
    # Exponential service times, true p99 = ln(100) ms: draw 400 steps of 2,000 samples.
    truth = 4.605170
    rng = random.Random(7)
    covered = 0
    for _ in range(400):
        samples = sorted(rng.expovariate(1.0) for _ in range(2000))

        def at(q: float, samples: list[float] = samples) -> float:
            return samples[min(int(q * len(samples)), len(samples) - 1)]

        interval = quantile_interval(0.99, len(samples), at)
        assert interval is not None
        covered += interval.low <= truth <= interval.high
    assert 0.90 <= covered / 400 <= 0.99


def test_a_share_with_no_errors_is_a_definite_pass_even_of_a_zero_bound() -> None:
    none = share_interval(0, 10_000)
    assert none is not None
    assert none.low == 0.0
    assert none.high < 0.0005
    assert not straddles(none, 0.005)
    assert not straddles(none, 0.0)
    # A short step with no error cannot show 0.1%, but shows nothing near it either.
    assert straddles(share_interval(0, 300), 0.001)
    assert not share_straddles(0, 300, 0.001)
    # One error in ten thousand against a zero bound is a definite fail.
    one = share_interval(1, 10_000)
    assert one is not None
    assert one.low > 0.0
    assert share_interval(0, 0) is None


def test_a_share_near_its_bound_is_marginal() -> None:
    near = share_interval(52, 10_000)  # 0.52% against 0.5%
    assert near is not None
    assert straddles(near, 0.005)
    assert share_straddles(52, 10_000, 0.005)
    far = share_interval(200, 10_000)  # 2%
    assert not straddles(far, 0.005)
