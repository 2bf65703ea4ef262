"""Sampling the latency and size models of `plimsoll.api.upstream`.

The mock draws each call's latency and body size from these; the generator
draws think times from the same shapes; tests check the samples against the
configured quantiles. A sampler is built once per route (the lognormal's
parameters and the table are precomputed) and then costs one draw per call.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Callable, Sequence
from statistics import NormalDist

from plimsoll.api.upstream import Latency, SizeChoice

Z95 = 1.6448536269514722  # the standard normal's 95th percentile


def lognormal_params(p50: float, p95: float) -> tuple[float, float]:
    """(mu, sigma) of the lognormal whose median is p50 and 95th percentile p95."""
    mu = math.log(p50)
    return mu, (math.log(p95) - mu) / Z95


def latency_sampler(model: Latency, rng: random.Random) -> Callable[[], float]:
    """A function returning one latency draw in seconds."""
    cap = model.max if model.max is not None else math.inf
    if model.fixed is not None:
        low, high = model.fixed - model.jitter, model.fixed + model.jitter
        if model.jitter == 0:
            value = min(model.fixed, cap)
            return lambda: value
        return lambda: min(rng.uniform(low, high), cap)
    if model.p50 is not None and model.p95 is not None:
        mu, sigma = lognormal_params(model.p50, model.p95)
        return lambda: min(rng.lognormvariate(mu, sigma), cap)
    qs, values = _table(model)
    # Inverse transform sampling: a uniform draw read through the table's quantiles.
    return lambda: _table_quantile(qs, values, rng.random(), cap)


def _table(model: Latency) -> tuple[list[float], list[float]]:
    """The quantile table's rows (quantiles, values), from (0, 0)."""
    assert model.quantiles is not None  # the model validator guarantees one form
    return [0.0] + [p.q for p in model.quantiles], [0.0] + [p.value for p in model.quantiles]


def _table_quantile(qs: list[float], values: list[float], u: float, cap: float) -> float:
    """The table's value at quantile `u`: linear between rows; past the last row the last
    value holds (the table says nothing about a longer tail). One rule for the sampler's
    draws and for `expected_quantile`, so the tests compare against what is drawn."""
    i = bisect.bisect_right(qs, u)
    if i >= len(qs):
        return min(values[-1], cap)
    q0, q1, v0, v1 = qs[i - 1], qs[i], values[i - 1], values[i]
    return min(v0 + (v1 - v0) * (u - q0) / (q1 - q0), cap)


def size_sampler(mix: Sequence[SizeChoice], rng: random.Random) -> Callable[[], int]:
    """A function returning one body size in bytes from a weighted mix."""
    if len(mix) == 1:
        only = mix[0].bytes
        return lambda: only
    cumulative = list(itertools.accumulate(choice.weight for choice in mix))
    total = cumulative[-1]
    sizes = [choice.bytes for choice in mix]
    return lambda: sizes[bisect.bisect_left(cumulative, rng.random() * total)]


def expected_quantile(model: Latency, quantile: float) -> float:
    """The configured distribution's own quantile (tests compare samples against it)."""
    cap = model.max if model.max is not None else math.inf
    if model.fixed is not None:
        return min(model.fixed - model.jitter + 2 * model.jitter * quantile, cap)
    if model.p50 is not None and model.p95 is not None:
        mu, sigma = lognormal_params(model.p50, model.p95)
        z = NormalDist().inv_cdf(quantile)
        return min(math.exp(mu + sigma * z), cap)
    qs, values = _table(model)
    return _table_quantile(qs, values, quantile, cap)
