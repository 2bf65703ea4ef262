"""A route's latency as the mock should draw it: lognormal p50/p95 capped, or a table.

Called by `traffic.TrafficFit` with a sample of a route's upstream times (or
whole durations when the log has no upstream time). The lognormal through the
sample's p50 and p95, capped at the largest time seen, is what
`plimsoll.api.upstream.Latency` draws; its goodness of fit is the
Kolmogorov-Smirnov distance between the sample and that model. Above
`MAX_KS_DISTANCE` the lognormal misdescribes the route, and the fit is the
sample's own quantile table instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from plimsoll.decide.calibration.reservoir import quantile

MAX_KS_DISTANCE = 0.05
TABLE_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)
Z95 = NormalDist().inv_cdf(0.95)


@dataclass(frozen=True)
class LatencyFit:
    p50: float
    p95: float
    maximum: float
    ks_distance: float  # sample vs the capped lognormal through p50/p95
    lognormal: bool  # False: use `table`
    table: tuple[tuple[float, float], ...]  # (q, seconds) rows
    samples: int
    source: str  # "upstream time" or "request time"


def lognormal_cdf(value: float, p50: float, p95: float) -> float:
    if value <= 0:
        return 0.0
    sigma = (math.log(p95) - math.log(p50)) / Z95
    return NormalDist().cdf((math.log(value) - math.log(p50)) / sigma)


def ks_distance(sorted_values: list[float], p50: float, p95: float, cap: float) -> float:
    """Largest gap between the sample's CDF and the capped lognormal's."""
    n = len(sorted_values)
    worst = 0.0
    for index, value in enumerate(sorted_values):
        model = 1.0 if value >= cap else lognormal_cdf(value, p50, p95)
        worst = max(worst, abs(model - index / n), abs(model - (index + 1) / n))
    return worst


def fit_latency(values: list[float], source: str) -> LatencyFit:
    ordered = sorted(max(v, 0.0) for v in values)
    if not ordered:
        raise ValueError("no latencies to fit")
    # A millisecond floor: logs round to ms, and a lognormal needs p50 > 0 and p95 > p50.
    p50 = max(quantile(ordered, 0.5), 0.001)
    p95 = max(quantile(ordered, 0.95), p50 * 1.01)
    maximum = max(ordered[-1], p95)
    step = max(1, len(ordered) // 20_000)  # the KS distance on a thinned sample: fast enough
    distance = ks_distance(ordered[::step], p50, p95, maximum)
    table = tuple(
        (q, value) for q, value in _rising([(q, quantile(ordered, q)) for q in TABLE_QUANTILES])
    )
    return LatencyFit(
        p50=p50,
        p95=p95,
        maximum=maximum,
        ks_distance=distance,
        lognormal=distance <= MAX_KS_DISTANCE,
        table=table,
        samples=len(ordered),
        source=source,
    )


def _rising(rows: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Table rows whose values never fall (a quantile table must rise in both columns)."""
    out: list[tuple[float, float]] = []
    for q, value in rows:
        floor = out[-1][1] if out else 0.0
        out.append((q, max(value, floor)))
    return out
