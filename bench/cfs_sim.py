"""A discrete-event simulation of a single-threaded server under a CFS quota: the truth
`bench/truth.py` holds Plimsoll's Poisson ceiling to, computed without Plimsoll.

One thread serves requests first come, first served; each needs `service_ms` of CPU.
Time is cut into CFS periods of `period_ms`; within each the thread may run for
`quota_ms` (cores × period), then it is throttled until the next period begins,
with or without work left (no carry-over, as the kernel's quota without burst).
Arrivals are Poisson at `rate` per second for `warm_up + duration` seconds; the
latency of every request arriving after the warm-up is recorded, from arrival to
the end of its service. Pure and seeded: the same arguments give the same answer.
Nothing here is shared with Plimsoll's own code.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Server:
    service_ms: float
    cores: float
    period_ms: float = 100.0

    @property
    def quota_ms(self) -> float:
        return self.cores * self.period_ms


def _serve(server: Server, start: float, work: float, budget: dict[int, float]) -> float:
    """Run `work` ms of CPU from `start` (ms); the time it ends. `budget` holds what is
    left of each period's quota, by period number."""
    t, left = start, work
    while left > 1e-12:
        period = int(t // server.period_ms)
        remaining = budget.get(period, server.quota_ms)
        if remaining <= 1e-12:  # throttled: wait for the next period
            t = (period + 1) * server.period_ms
            continue
        end_of_period = (period + 1) * server.period_ms
        run = min(left, remaining, end_of_period - t)
        budget[period] = remaining - run
        t += run
        left -= run
    return t


def latencies_ms(
    server: Server, rate: float, duration: float, warm_up: float, seed: int
) -> list[float]:
    rng = random.Random(seed)
    horizon = (warm_up + duration) * 1000.0
    budget: dict[int, float] = {}
    free_at = 0.0
    t = 0.0
    out: list[float] = []
    while True:
        t += rng.expovariate(rate) * 1000.0
        if t >= horizon:
            return out
        done = _serve(server, max(t, free_at), server.service_ms, budget)
        free_at = done
        if t >= warm_up * 1000.0:
            out.append(done - t)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(max(math.ceil(q * len(ordered)) - 1, 0), len(ordered) - 1)]


def passes(
    server: Server,
    rate: float,
    *,
    q: float,
    bound_ms: float,
    duration: float,
    warm_up: float,
    seeds: int = 5,
) -> bool:
    """The majority verdict of `seeds` simulated trials at `rate`."""
    good = sum(
        quantile(latencies_ms(server, rate, duration, warm_up, seed), q) <= bound_ms
        for seed in range(seeds)
    )
    return good * 2 > seeds


def ceiling(server: Server, *, q: float, bound_ms: float, duration: float, warm_up: float) -> float:
    """The highest passing rate, bisected to 1% between 1/s and the quota's own limit."""
    low, high = 1.0, server.cores * 1000.0 / server.service_ms
    while high - low > 0.01 * low:
        mid = (low + high) / 2
        if passes(server, mid, q=q, bound_ms=bound_ms, duration=duration, warm_up=warm_up):
            low = mid
        else:
            high = mid
    return low
