"""Discovering the scrape interval a window will be read at, from the samples themselves.

`PrometheusSource.scrape_interval` asks here first when the spec gives no
`metrics.scrapeInterval`, and falls back to the server's global `scrape_interval`
only when no series shows enough samples. The spacing of the samples is what the
window's queries will actually see: a job's own interval (a cluster's kubelet job
often scrapes every 30 s under a 1 m global), or cAdvisor's own timestamps, both
show in it and in no config field. Two places to look:

1. the target's own CPU counter (the series the figures are read from);
2. right after the target started it has too few samples, so the busiest series of
   the same metric (the longest-lived container the same scrape job serves) is read
   instead.

The median gap is robust to one late or missed scrape.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Awaitable, Callable
from typing import Any

CPU_COUNTER = "container_cpu_usage_seconds_total"
LOOKBACK = "10m"  # how far back samples are read

Query = Callable[[str], Awaitable[list[dict[str, Any]]]]


def median_spacing(times: list[float]) -> float | None:
    """The median gap between consecutive sample times (None with fewer than three),
    rounded as intervals are written: 0.1 s from a second up, else milliseconds."""
    gaps = [b - a for a, b in itertools.pairwise(sorted(times))]
    if len(gaps) < 2:
        return None
    median = statistics.median(gaps)
    return round(median, 1) if median >= 1 else round(median, 3)


def _spacing(result: list[dict[str, Any]]) -> float | None:
    for series in result:
        spacing = median_spacing([float(t) for t, _ in series.get("values", [])])
        if spacing is not None:
            return spacing
    return None


def labels_selector(labels: dict[str, str]) -> str:
    """An exact selector for one series, from its labels."""
    quoted = (
        f'{name}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for name, value in sorted(labels.items())
    )
    return "{" + ",".join(quoted) + "}"


async def sample_spacing(query: Query, target_matchers: str) -> float | None:
    """The interval the samples show: the target's own, else the busiest series'."""
    own = _spacing(await query(f"{CPU_COUNTER}{target_matchers}[{LOOKBACK}]"))
    if own is not None:
        return own
    busiest = await query(f"topk(1, count_over_time({CPU_COUNTER}[{LOOKBACK}]))")
    if not busiest:
        return None
    labels = {k: v for k, v in busiest[0].get("metric", {}).items() if k != "__name__"}
    return _spacing(await query(f"{CPU_COUNTER}{labels_selector(labels)}[{LOOKBACK}]"))
