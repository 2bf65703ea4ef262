"""A bounded uniform sample of a stream (Vitter's algorithm R), seeded.

Used by the calibration accumulators so a log of any length is fitted from at
most `size` values per quantity: quantiles and mixture fits need a sample, not
every line, and memory stays flat however long the log is.
"""

from __future__ import annotations

import random


class Reservoir:
    """Keeps a uniform sample of at most `size` of the values added."""

    def __init__(self, size: int, seed: int = 0) -> None:
        if size < 1:
            raise ValueError("a reservoir holds at least one value")
        self.size = size
        self.values: list[float] = []
        self.seen = 0
        self.rng = random.Random(seed)

    def add(self, value: float) -> None:
        self.seen += 1
        if len(self.values) < self.size:
            self.values.append(value)
            return
        slot = self.rng.randrange(self.seen)
        if slot < self.size:
            self.values[slot] = value


def quantile(sorted_values: list[float], q: float) -> float:
    """The q-quantile of sorted values (linear between order statistics)."""
    if not sorted_values:
        raise ValueError("no values")
    position = q * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return sorted_values[low] * (1 - fraction) + sorted_values[high] * fraction
