"""What the trial under way has measured so far, from the timeline slices cut until now.

The live view (`plimsoll.report.live`) shows it every second: the rate achieved, the
bar's quantiles so far, and the errors. Mid-trial the generators send timeline
slices, whose histograms hold every operation's total latency merged: the quantiles
here are of that, not of one operation's time to first token, so the view says
"all operations" (the verdict at the trial's end judges each bound as written).
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.spec import PassWhen
from plimsoll.api.timeline import TimelineSlice
from plimsoll.shared import histogram


@dataclass(frozen=True)
class SoFar:
    seconds: float  # of the measured window the slices cover
    sent: int
    ok: int
    errors: int
    quantiles_ms: dict[float, float | None]  # quantile (0..1) -> ms over every operation
    latency: str | None = None  # every slice's latency merged, encoded: the next call's base

    @property
    def rate(self) -> float:
        return self.sent / self.seconds if self.seconds > 0 else 0.0

    @property
    def error_share(self) -> float | None:
        ended = self.ok + self.errors
        return self.errors / ended if ended else None


def judged_quantiles(bar: PassWhen) -> list[float]:
    """The quantiles the bar's latency bounds judge, in order; p50 and p99 without any."""
    found = sorted({bound.quantile for bound in bar.latency})
    return found or [0.5, 0.99]


def so_far(
    slices: Sequence[TimelineSlice], quantiles: Sequence[float], before: SoFar | None = None
) -> SoFar:
    """`before` and the new slices of every generator and process, summed (slices side
    by side share their seconds: the window is as long as the latest slice's end).
    Folding in only the new ones keeps each second's work the same, however long the
    trial: the runner shares the host with what it measures."""
    merged = histogram.merge([before.latency if before else None, *(s.latency for s in slices)])
    return SoFar(
        seconds=max([before.seconds if before else 0.0, *(s.start + s.seconds for s in slices)]),
        sent=(before.sent if before else 0) + sum(s.sent for s in slices),
        ok=(before.ok if before else 0) + sum(s.ok for s in slices),
        errors=(before.errors if before else 0) + sum(s.errors for s in slices),
        quantiles_ms={q: histogram.quantile_ms(merged, q) for q in quantiles},
        latency=histogram.encode(merged) if histogram.count(merged) else None,
    )
