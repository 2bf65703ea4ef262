"""Each step's timeline chart: p50/p99 and the achieved rate over the trial, errors marked.

Drawn by `plimsoll.report.charts.draw_charts` for every full step that kept a
timeline: latency over time on top (with the bar's latency bounds as dashed
lines), the sending rate below, and every slice in which calls failed marked
with a red cross and its count, so a spike and its recovery show where they
happened; each fault of `trial.faults` is a dotted line, shaded until p99 was
back within the bar. An autoscaler flight's step adds the load its profile offered
beside the achieved rate, and a third row: the replicas ready and wanted over the
flight, each change of the wanted count (a scale event) marked. The figures come from
`plimsoll.shared.timeline.points` and the step's `flight`.
"""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from plimsoll.api.report import RunReport
from plimsoll.api.step import StepResult, TrialKind
from plimsoll.api.timeline import TimelinePoint
from plimsoll.shared.rate_profile import of_phases
from plimsoll.shared.timeline import points

LOG_SCALE_RATIO = 10  # a bar this many times the highest latency drawn: log axis


def chart_stem(step: StepResult) -> str:
    return f"timeline-step-{step.index}"


def timeline_points(step: StepResult) -> list[TimelinePoint]:
    return points(step.client.timeline) if step.client is not None else []


def offered_rates(report: RunReport, step: StepResult, series: list[TimelinePoint]) -> list[float]:
    """A flight's offered load in each slice (its level times the profile's mean share
    over the slice); [] for any other step."""
    profile = report.spec.workload.profile
    if step.flight is None or not profile:
        return []
    shape = of_phases(profile)
    return [
        step.level * (shape.area(p.start + p.seconds) - shape.area(p.start)) / p.seconds
        for p in series
    ]


def replica_counts(step: StepResult, end: float) -> tuple[list[float], list[int], list[int]]:
    """A flight's replicas over time as steps to `end`: (times, ready, wanted); empty for
    any other step."""
    counts = step.flight.replicas if step.flight is not None else []
    if not counts:
        return [], [], []
    times = [c.at for c in counts] + [max(end, counts[-1].at)]
    ready = [c.ready for c in counts] + [counts[-1].ready]
    desired = [c.desired for c in counts] + [counts[-1].desired]
    return times, ready, desired


def scale_events(step: StepResult) -> list[tuple[float, int]]:
    """Each change of the wanted count in a flight: (when, to how many)."""
    counts = step.flight.replicas if step.flight is not None else []
    return [(b.at, b.desired) for a, b in itertools.pairwise(counts) if b.desired != a.desired]


def _replica_row(step: StepResult, axes: Axes, end: float) -> None:
    times, ready, desired = replica_counts(step, end)
    axes.step(times, ready, where="post", color="C0", label="ready")
    axes.step(times, desired, where="post", color="C1", linestyle="--", label="wanted")
    events = scale_events(step)
    axes.scatter(
        [t for t, _ in events],
        [n for _, n in events],
        color="C1",
        marker="^",
        zorder=3,
        label="scale event",
    )
    axes.set_ylabel("replicas")
    axes.set_ylim(bottom=0)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))


def _fault_marks(step: StepResult, latency_axes: Axes, rate_axes: Axes) -> None:
    """Each fault as a dotted line on both axes, and its recovery shaded."""
    for number, fault in enumerate(step.faults):
        for axes in (latency_axes, rate_axes):
            axes.axvline(
                fault.at,
                linestyle=":",
                color="black",
                linewidth=1,
                label=fault.fault if axes is latency_axes else None,
            )
        if fault.recovery_s:
            latency_axes.axvspan(
                fault.at,
                fault.at + fault.recovery_s,
                color="grey",
                alpha=0.2,
                label="until p99 was back within the bar" if number == 0 else None,
            )


def _error_marks(rate_axes: Axes, middles: list[float], series: list[TimelinePoint]) -> None:
    """The slices that had errors, crossed on the rate axes with their count."""
    failed = [(x, p) for x, p in zip(middles, series, strict=True) if p.errors]
    if not failed:
        return
    rate_axes.scatter(
        [x for x, _ in failed],
        [p.rate for _, p in failed],
        marker="x",
        color="red",
        zorder=3,
        label="slice with errors",
    )
    for x, point in failed:
        rate_axes.annotate(str(point.errors), (x, point.rate), fontsize="x-small", color="red")


def timeline_figure(report: RunReport, step: StepResult) -> Figure:
    """One step's latency and rate over its measured window, with the bar and faults."""
    series = timeline_points(step)
    middles = [p.start + p.seconds / 2 for p in series]
    flight = step.flight is not None
    figure, axes_list = plt.subplots(
        3 if flight else 2,
        1,
        figsize=(8, 6.5 if flight else 5),
        sharex=True,
        gridspec_kw={"height_ratios": [2, 1, 1] if flight else [2, 1]},
    )
    latency_axes, rate_axes = axes_list[0], axes_list[1]
    for label, values in (
        ("p50", [p.p50_ms for p in series]),
        ("p99", [p.p99_ms for p in series]),
    ):
        drawn = [(x, v) for x, v in zip(middles, values, strict=True) if v is not None]
        if drawn:
            latency_axes.plot([x for x, _ in drawn], [v for _, v in drawn], label=label)
    for bound in report.spec.pass_when.latency:
        latency_axes.axhline(
            bound.below * 1000,
            linestyle="--",
            color="red",
            linewidth=1,
            label=f"bar p{bound.quantile * 100:g} < {bound.below * 1000:g} ms",
        )
    drawn_latencies = [v for p in series for v in (p.p50_ms, p.p99_ms) if v is not None]
    highest_bar = max((b.below * 1000 for b in report.spec.pass_when.latency), default=0.0)
    if drawn_latencies and highest_bar > LOG_SCALE_RATIO * max(drawn_latencies):
        # A bar far above the data flattens it on a linear axis: a 14 ms spike under a
        # 400 ms bar drew as a straight line. A log axis shows both.
        latency_axes.set_yscale("log")
    _fault_marks(step, latency_axes, rate_axes)
    rate_axes.plot(middles, [p.rate for p in series], color="C2", label="achieved rate")
    offered = offered_rates(report, step, series)
    if offered:
        rate_axes.plot(middles, offered, color="grey", linestyle="--", label="offered")
    _error_marks(rate_axes, middles, series)
    if flight:
        end = max((p.start + p.seconds for p in series), default=step.duration)
        _replica_row(step, axes_list[2], end)
    verdict = step.judgement.verdict.value
    steady = step.steadiness
    note = "" if steady is None or steady.steady else ", not steady"
    latency_axes.set_title(
        f"Step {step.index}: level {step.level:,} {report.spec.unit} ({verdict}{note})"
    )
    latency_axes.set_ylabel("latency (ms)")
    rate_axes.set_ylabel("requests/s")
    axes_list[-1].set_xlabel("seconds into the measured window")
    for axes in axes_list:
        if axes.get_legend_handles_labels()[0]:
            axes.legend(fontsize="small")
    return figure


def drawn_steps(report: RunReport) -> list[StepResult]:
    """The steps that get a timeline chart: full trials whose client kept a timeline."""
    return [
        step
        for step in report.steps
        if step.kind is TrialKind.FULL and step.client is not None and step.client.timeline
    ]
