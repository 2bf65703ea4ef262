"""Memory per held stream: the slope of the target's memory over the streams it holds.

Pure. The runner's streams probe (`plimsoll.run.streams_probe`) holds the streams in
rising counts, reads the target's working set at each, and hands the readings here.
A slope over at least two counts, not (memory with N) ÷ N: what the target holds
anyway (the runtime, its caches, the arenas the first connection allocates) would
otherwise be charged to the streams. On the fitted line it projects how many idle
streams fit under the memory limit, the figure a stream cap is sized from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from plimsoll.api.streams import StreamMemory

READINGS = 3  # counts held: a third, two thirds and all of the probe's count


class StreamMemoryError(ValueError):
    """The readings cannot give a slope."""


def stream_counts(count: int, readings: int = READINGS) -> list[int]:
    """The rising counts to read memory at, ending at the probe's `count`."""
    if count < 2:
        raise StreamMemoryError(
            f"workload.streams.count is {count}: a slope needs at least two counts, so "
            "hold at least 2 streams (hundreds or more for a steady figure)"
        )
    steps = min(readings, count)
    return sorted({max(1, round(count * k / steps)) for k in range(1, steps + 1)})


def _fit(points: Sequence[tuple[int, float]]) -> tuple[float, float]:
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / var
    return slope, mean_y - slope * mean_x


def _size(value: float) -> str:
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if abs(value) >= scale:
            return f"{value / scale:,.1f} {unit}"
    return f"{value:,.0f} B"


def memory_per_stream(
    points: Sequence[tuple[int, float]],
    *,
    variant: str = "default",
    baseline: float | None = None,
    limit: float | None = None,
) -> StreamMemory:
    """The least-squares slope of memory (bytes) over streams held, from (count, bytes)
    readings at two or more distinct counts; with `limit`, the streams that fit."""
    if len({count for count, _ in points}) < 2:
        raise StreamMemoryError(
            f"memory per stream needs readings at two or more stream counts, got {len(points)}"
        )
    slope, intercept = _fit(points)
    fit = None
    if limit is not None and slope > 0 and limit > intercept:
        fit = math.floor((limit - intercept) / slope)
    shown = ", ".join(f"{_size(b)} with {c:,}" for c, b in points)
    basis = f"slope of the working set over streams held ({shown})"
    if slope <= 0:
        basis += ": no growth measured, so no projection"
    elif fit is not None and limit is not None:
        basis += f"; ≈ {fit:,} streams fit under the {_size(limit)} limit"
    return StreamMemory(
        variant=variant,
        bytes_per_stream=round(slope, 1),
        counts=[c for c, _ in points],
        memory_bytes=[round(b) for _, b in points],
        baseline_bytes=None if baseline is None else round(baseline),
        limit_bytes=None if limit is None else round(limit),
        fit_under_limit=fit,
        basis=basis,
    )
