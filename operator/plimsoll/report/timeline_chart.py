"""Each step's timeline chart: p50/p99 and the achieved rate over the trial, errors marked.

Drawn by `plimsoll.report.charts.draw_charts` for every full step that kept a
timeline: latency over time on top (with the bar's latency bounds as dashed
lines), the sending rate below, and every slice in which calls failed marked
with a red cross and its count, so a spike and its recovery show where they
happened; each fault of `trial.faults` is a dotted line, shaded until p99 was
back within the bar. The figures come from `plimsoll.shared.timeline.points`.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from plimsoll.api.report import RunReport
from plimsoll.api.step import StepResult, TrialKind
from plimsoll.api.timeline import TimelinePoint
from plimsoll.shared.timeline import points

LOG_SCALE_RATIO = 10  # a bar this many times the highest latency drawn: log axis


def chart_stem(step: StepResult) -> str:
    return f"timeline-step-{step.index}"


def timeline_points(step: StepResult) -> list[TimelinePoint]:
    return points(step.client.timeline) if step.client is not None else []


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
    figure, (latency_axes, rate_axes) = plt.subplots(
        2, 1, figsize=(8, 5), sharex=True, gridspec_kw={"height_ratios": [2, 1]}
    )
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
    _error_marks(rate_axes, middles, series)
    verdict = step.judgement.verdict.value
    steady = step.steadiness
    note = "" if steady is None or steady.steady else ", not steady"
    latency_axes.set_title(
        f"Step {step.index}: level {step.level:,} {report.spec.unit} ({verdict}{note})"
    )
    latency_axes.set_ylabel("latency (ms)")
    rate_axes.set_ylabel("requests/s")
    rate_axes.set_xlabel("seconds into the measured window")
    for axes in (latency_axes, rate_axes):
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
