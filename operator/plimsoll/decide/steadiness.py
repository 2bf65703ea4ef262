"""Is a step steady? p99 that drifts upward through a trial says the level cannot last.

A step can pass its bar on the whole trial while its p99 climbs slice after
slice: a leak, a queue that never drains, a cache that fills. Such a step is
not a sustainable level, whatever its sum says. Like Perf Analyzer's stability
check, the rule compares the trial with itself: the median p99 of the first
third of the slices against the middle and the last third. It drifts when the
thirds rise in order and the last is both `RELATIVE_RISE` above the first and
`ABSOLUTE_RISE_MS` above it (so a sub-millisecond wobble at a low latency is no
drift). Pure: called by `plimsoll.run.step` with the slices' p99 in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from plimsoll.api.timeline import Steadiness

RELATIVE_RISE = 0.25
ABSOLUTE_RISE_MS = 0.5
MIN_SLICES = 6  # two per third: fewer cannot tell a drift from one slow slice


def steadiness(p99_ms: Sequence[float | None]) -> Steadiness | None:
    """The verdict on the slices' p99 (None where a slice answered nothing), or None when
    too few slices answered to tell."""
    values = [v for v in p99_ms if v is not None]
    if len(values) < MIN_SLICES:
        return None
    third = len(values) // 3
    first = median(values[:third])
    middle = median(values[third : len(values) - third])
    last = median(values[len(values) - third :])
    rose = first <= middle <= last
    rise = last - first
    if rose and rise > ABSOLUTE_RISE_MS and last > first * (1 + RELATIVE_RISE):
        note = (
            f"not steady: p99 rose through the trial from {first:.3g} ms in the first third "
            f"to {middle:.3g} ms in the middle and {last:.3g} ms in the last third "
            f"(+{rise / first:.0%}): this level may not last longer than the trial"
            if first > 0
            else f"not steady: p99 rose through the trial to {last:.3g} ms in the last third"
        )
        return Steadiness(steady=False, note=note, first_p99_ms=first, last_p99_ms=last)
    return Steadiness(steady=True, first_p99_ms=first, last_p99_ms=last)
