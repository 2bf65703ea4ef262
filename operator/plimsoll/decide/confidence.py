"""How sure a verdict is: 95% confidence intervals for quantile and share criteria.

The verdict (`plimsoll.decide.verdict`) calls `quantile_interval` for each latency
bound and `share_interval` for each error or shed share, with the step's own
sample count, and marks a criterion *marginal* when its interval straddles the
bound (`straddles`). A step with a marginal criterion and no definite failure is
judged marginal, repeated up to `noise.retries` times, and if it stays marginal
moves neither end of the bracket (`plimsoll.decide.search`).

- A quantile q from n samples: the sample at rank n·q is the estimate, and the
  true quantile lies between the ranks n·q ± z·sqrt(n·q·(1 − q)) with 95%
  confidence (the normal approximation of the binomial count of samples below
  it; order statistics, read off the step's own histogram). 10,000 samples at
  p99 give ranks 9,900 ± 20: the interval spans the 98.8th to 99.2th percentiles.
- A share k of n: the Wilson score interval, which stays inside [0, 1]. A share
  with no event at all is never marginal (`share_straddles`): the interval of
  "no errors in 300 calls" reaches 1.3%, which says how little a short step
  sees, not that the target came near a 0.5% bound; every low step would
  otherwise be repeated. From one event on, the interval judges.

Pure: numbers in, numbers out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

Z_95 = 1.959964  # two-sided 95%


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def quantile_ranks(quantile: float, samples: int) -> tuple[float, float]:
    """The quantiles (0..1) whose samples bound the 95% interval of `quantile`."""
    if samples <= 0:
        return quantile, quantile
    spread = Z_95 * math.sqrt(samples * quantile * (1.0 - quantile)) / samples
    return max(quantile - spread, 0.0), min(quantile + spread, 1.0)


def quantile_interval(
    quantile: float, samples: int, value_at: Callable[[float], float | None]
) -> Interval | None:
    """The 95% interval of `quantile`, reading each end with `value_at` (the histogram's
    value at a quantile); None without samples."""
    low_q, high_q = quantile_ranks(quantile, samples)
    low, high = value_at(low_q), value_at(high_q)
    if low is None or high is None:
        return None
    return Interval(low, high)


def share_interval(count: int, total: int) -> Interval | None:
    """The Wilson score 95% interval of the share `count` / `total`; None when total is 0."""
    if total <= 0:
        return None
    share = count / total
    z2 = Z_95 * Z_95
    centre = (share + z2 / (2 * total)) / (1 + z2 / total)
    margin = (
        Z_95 * math.sqrt(share * (1 - share) / total + z2 / (4 * total * total)) / (1 + z2 / total)
    )
    return Interval(max(centre - margin, 0.0), min(centre + margin, 1.0))


def straddles(interval: Interval | None, bound: float) -> bool:
    """True when the bound lies strictly inside the interval: the step's own samples
    cannot tell whether the criterion holds."""
    return interval is not None and interval.low < bound < interval.high


def share_straddles(count: int, total: int, bound: float) -> bool:
    """A share criterion is marginal: at least one event, and its interval straddles."""
    return count > 0 and straddles(share_interval(count, total), bound)
