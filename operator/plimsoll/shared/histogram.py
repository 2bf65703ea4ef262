"""Latency histograms that travel between processes and merge exactly.

Every latency Plimsoll records is an HdrHistogram of microseconds with three
significant digits (0.1% resolution) up to one hour. Generators encode theirs
into the trial result (base64 text, a few hundred bytes); the runner decodes and
adds them, so two processes' histograms merge into exactly the histogram of all
their samples, which averaging percentiles never would.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # one hour
SIGNIFICANT_DIGITS = 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def record_seconds(histogram: HdrHistogram, seconds: float) -> None:
    """Record a latency; values outside the range are clamped, never dropped."""
    histogram.record_value(clamped_us(int(seconds * 1e6)))


def clamped_us(micros: int) -> int:
    """`micros` within the histogram's range: the one clamping rule, for the generator's
    folded buffers too (a value outside is kept at the edge, never dropped)."""
    return min(max(micros, LOWEST_US), HIGHEST_US)


def clear(histogram: HdrHistogram) -> None:
    """`histogram.reset()` at C speed: hdrh's reset zeroes its 23,552 counters one by one
    in Python (1.0 ms, measured), which a generator does at every timeline slice on its
    event loop, holding back every answer that lands meanwhile; the counters are one ctypes
    array, zeroed here by one memset (5 us). The fields set after it are reset()'s own
    (hdrh 0.10); tests/shared/test_histogram.py holds the two to the same result."""
    counts = histogram.counts
    ctypes.memset(ctypes.addressof(counts), 0, ctypes.sizeof(counts))
    histogram.total_count = 0
    histogram.min_value = sys.maxsize
    histogram.max_value = 0
    histogram.start_time_stamp_msec = sys.maxsize
    histogram.end_time_stamp_msec = 0


def encode(histogram: HdrHistogram) -> str:
    encoded: bytes = histogram.encode()
    return encoded.decode("ascii")


def decode(encoded: str) -> HdrHistogram:
    histogram = new_histogram()
    histogram.decode_and_add(encoded.encode("ascii"))
    return histogram


def merge(encoded: Iterable[str | None]) -> HdrHistogram:
    merged = new_histogram()
    for item in encoded:
        if item:
            merged.decode_and_add(item.encode("ascii"))
    return merged


def quantile_ms(histogram: HdrHistogram, quantile: float) -> float | None:
    """The latency at `quantile` (0..1) in milliseconds, or None with no samples."""
    if histogram.get_total_count() == 0:
        return None
    return float(histogram.get_value_at_percentile(quantile * 100)) / 1000.0


def count(histogram: HdrHistogram) -> int:
    return int(histogram.get_total_count())
