"""Merging and bounding timelines: slices of several processes add up exactly.

Slices start on multiples of their width (the generator cuts at measure start +
k × width and widens by doubling), so two timelines of different widths line up
once the finer one is coarsened to the wider width. `merge_timelines` does that
and adds slices with the same start; `bounded` merges neighbours until at most
`limit` slices remain. Called by `plimsoll.shared.results` (processes and pods),
by the generator (a long trial stays bounded on the wire) and by the step
(report.json). `points` turns slices into the figures the report draws.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.timeline import MAX_SLICES, TimelinePoint, TimelineSlice
from plimsoll.shared import histogram


def _add(slices: Sequence[TimelineSlice], start: float, seconds: float) -> TimelineSlice:
    latencies = [s.latency for s in slices if s.latency]
    latency = (
        latencies[0]
        if len(latencies) == 1
        else (histogram.encode(histogram.merge(latencies)) if latencies else None)
    )
    return TimelineSlice(
        start=start,
        seconds=seconds,
        latency=latency,
        sent=sum(s.sent for s in slices),
        ok=sum(s.ok for s in slices),
        errors=sum(s.errors for s in slices),
        replica_sent=_add_counts([s.replica_sent for s in slices]),
    )


def _add_counts(counts: Sequence[Sequence[int]]) -> list[int]:
    """Per-replica counts added position by position (a slice without them adds nothing)."""
    width = max((len(c) for c in counts), default=0)
    return [sum(c[i] for c in counts if i < len(c)) for i in range(width)]


def _width(slices: Sequence[TimelineSlice]) -> float:
    """The timeline's regular width: the widest slice (a last, shorter one is cut short)."""
    return max(s.seconds for s in slices)


def coarsen(slices: Sequence[TimelineSlice], width: float) -> list[TimelineSlice]:
    """The same timeline in slices of `width` (a multiple of its own), by start."""
    groups: dict[int, list[TimelineSlice]] = {}
    for item in slices:
        # The small epsilon keeps 1.2 / 0.6 from landing in slice 1 by rounding.
        groups.setdefault(int(item.start / width + 1e-6), []).append(item)
    out = []
    for index in sorted(groups):
        group = groups[index]
        start = index * width
        end = max(s.start + s.seconds for s in group)
        out.append(_add(group, start, min(width, end - start)))
    return out


def bounded(slices: Sequence[TimelineSlice], limit: int = MAX_SLICES) -> list[TimelineSlice]:
    """At most `limit` slices: neighbours merge into slices twice as wide until they fit."""
    out = list(slices)
    while len(out) > limit:
        out = coarsen(out, 2 * _width(out))
    return out


def merge_timelines(
    timelines: Sequence[Sequence[TimelineSlice]], limit: int = MAX_SLICES
) -> list[TimelineSlice]:
    """Several processes' timelines as one: each coarsened to the widest, then added."""
    present = [list(t) for t in timelines if t]
    if not present:
        return []
    if len(present) == 1:
        return bounded(present[0], limit)
    width = max(_width(t) for t in present)
    return bounded(coarsen([s for t in present for s in t], width), limit)


def points(slices: Sequence[TimelineSlice]) -> list[TimelinePoint]:
    """Each slice's p50, p99, sending rate and errors: what the report draws."""
    out = []
    for item in slices:
        decoded = histogram.decode(item.latency) if item.latency else None
        out.append(
            TimelinePoint(
                start=item.start,
                seconds=item.seconds,
                p50_ms=histogram.quantile_ms(decoded, 0.5) if decoded is not None else None,
                p99_ms=histogram.quantile_ms(decoded, 0.99) if decoded is not None else None,
                rate=item.sent / item.seconds,
                errors=item.errors,
            )
        )
    return out
