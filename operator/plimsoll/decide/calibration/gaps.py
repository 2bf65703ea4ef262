"""Bursts in a user's calls: in-burst gaps, the pauses between bursts, and the threshold.

Called by `traffic.TrafficFit` with the gaps (start to start, seconds) of every
human client. The gaps are a mixture: in-burst gaps (lognormal) and pauses
(exponential), the shape `plimsoll_generator.behaviour.GapModel` draws. An EM
fit of that mixture gives the in-burst median and the share of gaps inside a
burst; the threshold is the gap at which both components are equally likely,
and splitting each client's calls there gives the burst sizes.

A user who waits for its answer cannot start its next call before the last one
ended: when the next call starts as the previous one ends, the gap the user
meant was at most what the log shows (a censored gap). The fit treats those
as bounds, not values (the E-step uses the components' CDFs, the M-step their
truncated moments), so slow calls do not pass for long gaps. The mean gap is
the fitted mixture's.

A log ends while every client is between two calls: its last gap is still open.
Leaving those out would keep exactly the long pauses a short log cuts off, and
the fitted mean gap would come out short (a 180 s capture of users pausing
18 s on average: 3.6 s fitted where 4.5 s was modeled). Each client's open gap
enters the fit as a lower bound (`beyond`): a call starts a fresh gap, so the
time from it to the log's end is that gap, right-censored.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from plimsoll.decide.calibration.reservoir import quantile

ITERATIONS = 200
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class Gap:
    """One gap between a client's call starts; `censored`: the next call started as the
    previous one ended, so the intended gap was at most `seconds`; `beyond`: the log
    ended first, so the gap was longer than `seconds`."""

    seconds: float
    censored: bool = False
    beyond: bool = False


@dataclass(frozen=True)
class GapFit:
    burst_gap_median: float  # median in-burst gap, seconds
    in_burst_sigma: float  # its spread, log scale
    in_burst_share: float  # share of gaps that lie inside a burst
    pause_mean: float  # mean pause between bursts, seconds
    mean_gap: float  # mean of the fitted mixture, seconds
    observed_mean: float  # mean of the gaps as logged
    threshold: float  # gaps above this start a new burst
    gaps: int  # how many gaps the fit saw
    censored: int  # of which bounds only (the call before outlasted the intended gap)
    open_at_end: int = 0  # of which lower bounds only (the log ended inside them)


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


def _norm_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _norm_pdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


class _Mixture:
    share: float
    mu: float
    sigma: float
    pause: float

    def __init__(self, share: float, mu: float, sigma: float, pause: float) -> None:
        self.share, self.mu, self.sigma, self.pause = share, mu, sigma, pause

    def responsibility(self, gap: Gap) -> float:
        if gap.beyond:
            a = self.share * _norm_cdf(-(math.log(gap.seconds) - self.mu) / self.sigma)
            b = (1 - self.share) * math.exp(-gap.seconds / self.pause)
            return a / (a + b) if a + b > 0 else 0.0
        if not gap.censored:
            return _responsibility(
                math.log(gap.seconds), self.share, self.mu, self.sigma, self.pause
            )
        a = self.share * _norm_cdf((math.log(gap.seconds) - self.mu) / self.sigma)
        b = (1 - self.share) * -math.expm1(-gap.seconds / self.pause)
        return a / (a + b) if a + b > 0 else 0.5

    def log_moments(self, gap: Gap) -> tuple[float, float]:
        """E[ln G] and Var[ln G] of the in-burst component given what the gap tells."""
        y = math.log(gap.seconds)
        if gap.beyond:  # the normal truncated below at y
            alpha = (y - self.mu) / self.sigma
            ratio = _norm_pdf(alpha) / max(_norm_cdf(-alpha), 1e-300)
            variance = self.sigma**2 * max(1 + alpha * ratio - ratio * ratio, 1e-9)
            return self.mu + self.sigma * ratio, variance
        if not gap.censored:
            return y, 0.0
        alpha = (y - self.mu) / self.sigma
        mass = max(_norm_cdf(alpha), 1e-300)
        ratio = _norm_pdf(alpha) / mass
        mean = self.mu - self.sigma * ratio
        variance = self.sigma**2 * max(1 - alpha * ratio - ratio * ratio, 1e-9)
        return mean, variance

    def pause_mean_given(self, gap: Gap) -> float:
        """E[G] of the pause component given what the gap tells."""
        if gap.beyond:  # memoryless: what is left of a pause is a whole pause
            return gap.seconds + self.pause
        if not gap.censored:
            return gap.seconds
        c, p = gap.seconds, self.pause
        below = -math.expm1(-c / p)
        return p - c * math.exp(-c / p) / below if below > 1e-12 else c / 2


def fit_gaps(gaps: list[Gap]) -> GapFit:
    """Fit the burst mixture to positive gaps (at least 20 of them)."""
    values = sorted((g for g in gaps if g.seconds > 0), key=lambda g: g.seconds)
    if sum(not g.beyond for g in values) < 20:
        raise ValueError(f"{len(values)} gaps between calls are too few to fit bursts (>= 20)")
    exact = [g.seconds for g in values if not g.beyond]
    upper = exact[int(0.8 * len(exact)) :]
    model = _Mixture(0.8, math.log(quantile(exact, 0.4)), 0.8, 0.0)
    model.pause = max(sum(upper) / len(upper), math.exp(model.mu) * 2)
    for _ in range(ITERATIONS):
        weights = [model.responsibility(g) for g in values]
        total = sum(weights)
        rest = len(weights) - total
        if total < 1e-9 or rest < 1e-9:
            break  # one component holds everything: a single regime, no bursts
        moments = [model.log_moments(g) for g in values]
        mu = sum(w * m for w, (m, _) in zip(weights, moments, strict=True)) / total
        spread = sum(w * (v + (m - mu) ** 2) for w, (m, v) in zip(weights, moments, strict=True))
        pause = (
            sum((1 - w) * model.pause_mean_given(g) for w, g in zip(weights, values, strict=True))
            / rest
        )
        share = min(max(total / len(weights), 1e-6), 1 - 1e-6)
        converged = abs(mu - model.mu) < 1e-7 and abs(share - model.share) < 1e-7
        model = _Mixture(share, mu, max(math.sqrt(spread / total), 1e-3), pause)
        if converged:
            break
    in_burst_mean = math.exp(model.mu + model.sigma**2 / 2)
    return GapFit(
        burst_gap_median=math.exp(model.mu),
        in_burst_sigma=model.sigma,
        in_burst_share=model.share,
        pause_mean=model.pause,
        mean_gap=model.share * in_burst_mean + (1 - model.share) * model.pause,
        observed_mean=sum(exact) / len(exact),
        threshold=_threshold(model.share, model.mu, model.sigma, model.pause, exact[-1]),
        gaps=len(values),
        censored=sum(g.censored for g in values),
        open_at_end=sum(g.beyond for g in values),
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
