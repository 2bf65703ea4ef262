"""Bursts in a user's calls: in-burst gaps, the pauses between bursts, and the threshold.

Called by `traffic.TrafficFit` with the gaps (start to start, seconds) of every
human client. The gaps are a mixture: in-burst gaps (lognormal) and pauses
(exponential), the shape `plimsoll_generator.behaviour.GapModel` draws. An EM
fit of that mixture gives the in-burst median and the share of gaps inside a
burst; the threshold is the gap at which both components are equally likely,
and splitting each client's calls there gives the burst sizes. The mean gap is
measured directly.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from plimsoll.decide.calibration.reservoir import quantile

ITERATIONS = 200
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class GapFit:
    burst_gap_median: float  # median in-burst gap, seconds
    in_burst_sigma: float  # its spread, log scale
    in_burst_share: float  # share of gaps that lie inside a burst
    pause_mean: float  # mean pause between bursts, seconds
    mean_gap: float  # mean of all gaps, seconds
    threshold: float  # gaps above this start a new burst
    gaps: int  # how many gaps the fit saw


def _log_densities(y: float, mu: float, sigma: float, pause: float) -> tuple[float, float]:
    """Log densities of ln(gap) = y under the lognormal and the exponential components."""
    z = (y - mu) / sigma
    in_burst = -0.5 * z * z - math.log(sigma) - _LOG_SQRT_2PI
    gap = math.exp(y)
    between = y - math.log(pause) - gap / pause
    return in_burst, between


def _responsibility(y: float, share: float, mu: float, sigma: float, pause: float) -> float:
    a, b = _log_densities(y, mu, sigma, pause)
    a += math.log(share)
    b += math.log(1 - share)
    top = max(a, b)
    ea, eb = math.exp(a - top), math.exp(b - top)
    return ea / (ea + eb)


def fit_gaps(gaps: list[float]) -> GapFit:
    """Fit the burst mixture to positive gaps (at least 20 of them)."""
    values = sorted(g for g in gaps if g > 0)
    if len(values) < 20:
        raise ValueError(f"{len(values)} gaps between calls are too few to fit bursts (>= 20)")
    logs = [math.log(g) for g in values]
    mean_gap = sum(values) / len(values)
    mu = math.log(quantile(values, 0.4))
    sigma = 0.8
    upper = values[int(0.8 * len(values)) :]
    pause = max(sum(upper) / len(upper), math.exp(mu) * 2)
    share = 0.8
    for _ in range(ITERATIONS):
        weights = [_responsibility(y, share, mu, sigma, pause) for y in logs]
        total = sum(weights)
        rest = len(weights) - total
        if total < 1e-9 or rest < 1e-9:
            break  # one component holds everything: a single regime, no bursts
        new_mu = sum(w * y for w, y in zip(weights, logs, strict=True)) / total
        variance = sum(w * (y - new_mu) ** 2 for w, y in zip(weights, logs, strict=True)) / total
        new_sigma = max(math.sqrt(variance), 1e-3)
        new_pause = sum((1 - w) * g for w, g in zip(weights, values, strict=True)) / rest
        new_share = min(max(total / len(weights), 1e-6), 1 - 1e-6)
        converged = abs(new_mu - mu) < 1e-7 and abs(new_share - share) < 1e-7
        mu, sigma, pause, share = new_mu, new_sigma, new_pause, new_share
        if converged:
            break
    return GapFit(
        burst_gap_median=math.exp(mu),
        in_burst_sigma=sigma,
        in_burst_share=share,
        pause_mean=pause,
        mean_gap=mean_gap,
        threshold=_threshold(share, mu, sigma, pause, values[-1]),
        gaps=len(values),
    )


def _threshold(share: float, mu: float, sigma: float, pause: float, longest: float) -> float:
    """The gap above the in-burst median where a pause becomes the likelier explanation."""
    low, high = mu, math.log(max(longest, math.exp(mu)))
    if _responsibility(high, share, mu, sigma, pause) >= 0.5:
        return math.exp(high)
    for _ in range(60):
        middle = (low + high) / 2
        if _responsibility(middle, share, mu, sigma, pause) >= 0.5:
            low = middle
        else:
            high = middle
    return math.exp((low + high) / 2)


def burst_sizes(starts: list[float], threshold: float) -> list[int]:
    """The sizes of one client's bursts: its sorted call starts split where a gap exceeds
    `threshold`."""
    if not starts:
        return []
    sizes = [1]
    for before, after in itertools.pairwise(starts):
        if after - before > threshold:
            sizes.append(1)
        else:
            sizes[-1] += 1
    return sizes
