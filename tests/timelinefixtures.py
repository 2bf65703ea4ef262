"""Timelines of known shape for the tests of the fault windows and the timeline chart."""

from __future__ import annotations

from plimsoll.api.timeline import TimelineSlice
from plimsoll.shared import histogram


def known_timeline(p99_ms: list[float], errors: list[int]) -> list[TimelineSlice]:
    """One 1 s slice per entry: 100 answers at that latency (so every quantile is it) and
    that many errors beside them."""
    slices = []
    for k, (value, failed) in enumerate(zip(p99_ms, errors, strict=True)):
        recorded = histogram.new_histogram()
        for _ in range(100):
            histogram.record_seconds(recorded, value / 1000)
        slices.append(
            TimelineSlice(
                start=float(k),
                seconds=1.0,
                latency=histogram.encode(recorded),
                sent=100 + failed,
                ok=100,
                errors=failed,
            )
        )
    return slices
