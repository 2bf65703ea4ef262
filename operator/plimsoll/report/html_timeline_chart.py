"""report.html's step timelines: latency, sending rate, errors, faults and replicas over a trial.

One plotly chart per full step that kept a timeline (`drawn_steps`, as the PNG
timelines): p50 and p99 per slice on top, the achieved rate below with each slice
that had errors marked, each fault of `trial.faults` as a dotted line and its recovery
shaded, and, with several replicas, what each was sent per second; an autoscaler
flight's instead the load its profile offered and the replicas ready and wanted over
the flight, each scale event marked (`timeline_chart`'s series). A timeline slice
merges every operation's total latency, so only the bars that judge exactly that
(operation '*', metric total) are drawn over it; the others are named under the chart.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from plimsoll.api.report import RunReport
from plimsoll.api.step import StepResult
from plimsoll.api.timeline import TimelinePoint
from plimsoll.report.html_chart import BAR_LINE, BROKEN, Chart, bound_title
from plimsoll.report.timeline_chart import (
    LOG_SCALE_RATIO,
    drawn_steps,
    offered_rates,
    replica_counts,
    scale_events,
    timeline_points,
)


def _replica_rates(step: StepResult) -> list[list[float]]:
    """Requests sent to each replica per second, slice by slice ([] with one replica)."""
    slices = step.client.timeline if step.client is not None else []
    replicas = max((len(s.replica_sent) for s in slices), default=0)
    return [
        [(s.replica_sent[i] if i < len(s.replica_sent) else 0) / s.seconds for s in slices]
        for i in range(replicas)
    ]


def _latency_row(
    figure: go.Figure,
    report: RunReport,
    step: StepResult,
    series: list[TimelinePoint],
    middles: list[float],
) -> int:
    """p50 and p99 over the window, the bar's merged latency bounds, and each fault with
    its recovery shaded, in the first row; how many bounds it drew."""
    for label, values in (("p50", [p.p50_ms for p in series]), ("p99", [p.p99_ms for p in series])):
        drawn = [(x, v) for x, v in zip(middles, values, strict=True) if v is not None]
        if drawn:
            figure.add_trace(
                go.Scatter(
                    x=[x for x, _ in drawn], y=[v for _, v in drawn], mode="lines", name=label
                ),
                row=1,
                col=1,
            )
    merged_bars = [
        b for b in report.spec.pass_when.latency if b.operation == "*" and b.metric == "total"
    ]
    end = max((p.start + p.seconds for p in series), default=step.duration)
    for bound in merged_bars:
        figure.add_trace(
            go.Scatter(
                x=[0, end],
                y=[bound.below * 1000] * 2,
                mode="lines",
                line=BAR_LINE,
                name=f"bar: {bound_title(bound)}",
                hoverinfo="name",
            ),
            row=1,
            col=1,
        )
    latencies = [v for p in series for v in (p.p50_ms, p.p99_ms) if v is not None]
    top = max(latencies, default=1.0)
    highest_bar = max((b.below * 1000 for b in merged_bars), default=0.0)
    if latencies and highest_bar > LOG_SCALE_RATIO * top:
        figure.update_yaxes(type="log", row=1, col=1)  # a far bar flattens the data otherwise
    _fault_marks(figure, step, max(top, highest_bar))
    return len(merged_bars)


def _fault_marks(figure: go.Figure, step: StepResult, height: float) -> None:
    """Each fault as a dotted line up to `height`, shaded until p99 was back."""
    for fault in step.faults:
        figure.add_trace(
            go.Scatter(
                x=[fault.at, fault.at],
                y=[0, height],
                mode="lines",
                line={"color": "black", "dash": "dot", "width": 1},
                name=f"fault: {fault.fault}",
                hovertext=f"{fault.fault}: {'held' if fault.held else 'did not hold'}",
                hoverinfo="text",
            ),
            row=1,
            col=1,
        )
        if fault.recovery_s:
            figure.add_vrect(
                x0=fault.at,
                x1=fault.at + fault.recovery_s,
                fillcolor="grey",
                opacity=0.2,
                line_width=0,
                row=1,
                col=1,
            )


def _error_marks(figure: go.Figure, middles: list[float], series: list[TimelinePoint]) -> None:
    """The slices that had errors, crossed on the rate row with their count."""
    failed = [(x, p) for x, p in zip(middles, series, strict=True) if p.errors]
    if not failed:
        return
    figure.add_trace(
        go.Scatter(
            x=[x for x, _ in failed],
            y=[p.rate for _, p in failed],
            mode="markers+text",
            marker={"symbol": "x", "color": BROKEN, "size": 9},
            text=[str(p.errors) for _, p in failed],
            textposition="top center",
            name="slice with errors (count)",
        ),
        row=2,
        col=1,
    )


def _flight_rows(
    figure: go.Figure, report: RunReport, step: StepResult, middles: list[float]
) -> None:
    """A flight's offered load on the rate row, its replicas ready and wanted (each scale
    event marked) on the third."""
    series = timeline_points(step)
    figure.add_trace(
        go.Scatter(
            x=middles,
            y=offered_rates(report, step, series),
            mode="lines",
            line={"color": "grey", "dash": "dash"},
            name="offered",
        ),
        row=2,
        col=1,
    )
    end = max((p.start + p.seconds for p in series), default=step.duration)
    times, ready, desired = replica_counts(step, end)
    for name, counts, dash in (("ready", ready, "solid"), ("wanted", desired, "dash")):
        figure.add_trace(
            go.Scatter(
                x=times, y=counts, mode="lines", line={"shape": "hv", "dash": dash}, name=name
            ),
            row=3,
            col=1,
        )
    events = scale_events(step)
    figure.add_trace(
        go.Scatter(
            x=[t for t, _ in events],
            y=[n for _, n in events],
            mode="markers",
            marker={"symbol": "triangle-up", "size": 9},
            name="scale event",
            hovertemplate="%{x:.0f} s: wanted %{y}<extra></extra>",
        ),
        row=3,
        col=1,
    )


def timeline_chart(report: RunReport, step: StepResult) -> Chart:
    """One step's latency, sending rate (and each replica's, or a flight's replicas) over
    its measured window."""
    series = timeline_points(step)
    middles = [p.start + p.seconds / 2 for p in series]
    flight = step.flight is not None
    replicas = [] if flight else _replica_rates(step)
    rows = 3 if replicas or flight else 2
    third = ["replicas"] if flight else ["sent per second, per replica"] * bool(replicas)
    titles = ["latency (ms)", "sent per second", *third]
    figure = make_subplots(
        rows=rows,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        row_heights=[0.5, 0.25, 0.25] if rows == 3 else [0.65, 0.35],
        subplot_titles=titles,
    )
    bars = _latency_row(figure, report, step, series, middles)
    figure.add_trace(
        go.Scatter(x=middles, y=[p.rate for p in series], mode="lines", name="achieved rate"),
        row=2,
        col=1,
    )
    _error_marks(figure, middles, series)
    for number, rates in enumerate(replicas):
        figure.add_trace(
            go.Scatter(x=middles, y=rates, mode="lines", name=f"replica {number}"),
            row=3,
            col=1,
        )
    if flight:
        _flight_rows(figure, report, step, middles)
    figure.update_layout(
        height=520 if rows == 3 else 430,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": -0.15},
        template="plotly_white",
        hovermode="x unified",
    )
    figure.update_xaxes(title_text="seconds into the measured window", row=rows, col=1)
    return Chart(
        id=f"chart-timeline-step-{step.index}",
        title=_title(report, step),
        figure=figure,
        note=_note(report, step, bars),
    )


def _title(report: RunReport, step: StepResult) -> str:
    steady = step.steadiness
    drift = "" if steady is None or steady.steady else ", not steady"
    return (
        f"Step {step.index}: level {step.level:,} {report.spec.unit}, {step.variant} "
        f"({step.judgement.verdict.value}{drift})"
    )


def _note(report: RunReport, step: StepResult, drawn_bars: int) -> str:
    """What the chart cannot show: the bars over one operation or over TTFT, and why a
    step was not steady."""
    parts = []
    others = len(report.spec.pass_when.latency) - drawn_bars
    if others:
        parts.append(
            f"Latency here merges every operation's total latency, so {others} bar(s) on one "
            "operation or on another metric are not drawn over it (see the bars' charts)."
        )
    if step.steadiness is not None and not step.steadiness.steady:
        parts.append(step.steadiness.note)
    if step.faults:
        parts.append("Dotted lines: faults; shaded: until p99 was back within the bar.")
    return " ".join(parts)


def timeline_charts(report: RunReport) -> list[Chart]:
    return [timeline_chart(report, step) for step in drawn_steps(report)]
