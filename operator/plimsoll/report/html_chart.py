"""report.html's charts by level: each latency bar against what it judges, latency per
operation, the target's resources against its limits, ceilings per variant, shapes' costs.

Built as plotly figures from the report's model (the step timelines are in
`plimsoll.report.html_timeline_chart`); `plimsoll.report.html` lays them into the page,
which embeds plotly.js once, so every chart is interactive (hover for the figures,
click a legend entry to hide a series) and the file needs no network.

Unlike the PNG charts, latency is never merged across operations under a bar: each
bound of `passWhen.latency` gets its own chart, drawn from the histograms that bound
judges (`plimsoll.decide.step_summary.bound_ms`: its operation, its metric, its
quantile), so a TTFT bar is never drawn over total latency, nor a p95 bar over p99.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from plimsoll.api.report import RunReport
from plimsoll.api.spec import CapacityTestSpec, LatencyBound
from plimsoll.api.step import StepRecord, StepResult, Verdict
from plimsoll.api.target import PodShape
from plimsoll.decide.step_summary import bound_ms
from plimsoll.report.sentence import format_bytes, format_cpu
from plimsoll.shared import histogram

VERDICT_SYMBOLS = {
    Verdict.PASS: "circle",
    Verdict.FAIL: "x",
    Verdict.INVALID: "square",
    Verdict.NOISY: "triangle-up",
    Verdict.MARGINAL: "diamond",
}
HELD = "#2ca02c"
BROKEN = "#d62728"
BAR_LINE = {"color": BROKEN, "dash": "dash", "width": 1.5}
LIMIT_LINE = {"color": BROKEN, "dash": "dash", "width": 1.5}
_QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


@dataclass(frozen=True)
class Chart:
    """One figure of the page: its element id, a heading, and a sentence saying how to read it."""

    id: str
    title: str
    figure: go.Figure
    note: str = ""

    @property
    def series(self) -> list[str]:
        """The names of the series drawn: the browser test checks each is in the DOM."""
        return [str(trace.name) for trace in self.figure.data]


def _layout(figure: go.Figure, x_title: str, y_title: str, height: int = 380) -> go.Figure:
    figure.update_layout(
        height=height,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": -0.22},
        hovermode="closest",
        template="plotly_white",
    )
    figure.update_xaxes(title_text=x_title)
    figure.update_yaxes(title_text=y_title)
    return figure


def _pairs(report: RunReport) -> list[tuple[StepResult, StepRecord]]:
    return sorted(report.step_pairs(), key=lambda pair: (pair[1].level, pair[1].index))


def _variants(report: RunReport) -> list[str]:
    return sorted({record.variant for record in report.records})


def _named(base: str, variant: str, variants: Sequence[str]) -> str:
    return f"{base} ({variant})" if len(variants) > 1 else base


def bound_title(bound: LatencyBound) -> str:
    """The bar in words, as the verdict names it: 'p95 ttft latency of chat < 900 ms'."""
    operation = "all operations" if bound.operation == "*" else bound.operation
    quantile = f"p{bound.quantile * 100:g}"
    return f"{quantile} {bound.metric} latency of {operation} < {bound.below * 1000:g} ms"


def _bar_trace(bound: LatencyBound, levels: Sequence[int]) -> go.Scatter:
    return go.Scatter(
        x=[min(levels), max(levels)],
        y=[bound.below * 1000] * 2,
        mode="lines",
        line=BAR_LINE,
        name=f"bar: {bound_title(bound)}",
        hoverinfo="name",
    )


def _steps_trace(
    drawn: Sequence[tuple[StepRecord, float]],
    name: str,
    hover: str,
    *,
    mode: str = "lines+markers",
    marker: dict[str, Any] | None = None,
    text: list[str] | None = None,
    **extra: Any,
) -> go.Scatter:
    """One series of steps by level, each marker shaped by its step's verdict and the
    step named on hover: what every per-level chart draws."""
    return go.Scatter(
        x=[record.level for record, _ in drawn],
        y=[value for _, value in drawn],
        mode=mode,
        name=name,
        marker={"symbol": [VERDICT_SYMBOLS[r.verdict] for r, _ in drawn], **(marker or {})},
        text=text or [f"step {r.index} ({r.verdict.value})" for r, _ in drawn],
        hovertemplate=hover,
        **extra,
    )


def bound_chart(report: RunReport, number: int, bound: LatencyBound) -> Chart | None:
    """One bar of `passWhen.latency` against exactly what it judges, per level: each step a
    marker, green where this bound held and red where it broke, shaped by the step's verdict."""
    pairs = _pairs(report)
    variants = _variants(report)
    unit = report.spec.unit
    figure = go.Figure()
    limit = bound.below * 1000
    for variant in variants:
        drawn = [
            (record, value)
            for step, record in pairs
            if record.variant == variant and (value := bound_ms(step.client, bound)) is not None
        ]
        if not drawn:
            continue
        figure.add_trace(
            _steps_trace(
                drawn,
                _named(f"p{bound.quantile * 100:g} {bound.metric}", variant, variants),
                f"%{{x:,}} {unit}: %{{y:,.1f}} ms<br>%{{text}}<extra></extra>",
                line={"width": 1},
                marker={
                    "size": 10,
                    "color": [HELD if value <= limit else BROKEN for _, value in drawn],
                },
                text=[
                    f"step {record.index}: {'held' if value <= limit else 'broke'} this bar; "
                    f"step {record.verdict.value}"
                    for record, value in drawn
                ],
            )
        )
    if not figure.data:
        return None
    figure.add_trace(_bar_trace(bound, [r.level for _, r in pairs]))
    _layout(figure, f"level ({unit})", f"p{bound.quantile * 100:g} {bound.metric} latency (ms)")
    return Chart(
        id=f"chart-bar-{number}",
        title=bound_title(bound),
        figure=figure,
        note="Each marker is a step: green where this bar held, red where it broke; its "
        "shape is the step's verdict (circle pass, × fail, square invalid, triangle noisy, "
        "diamond marginal). Only the latency this bar judges is drawn.",
    )


def _operation_ms(step: StepResult, operation: str, field: str, quantile: float) -> float | None:
    client = step.client
    if client is None or operation not in client.operations:
        return None
    encoded = getattr(client.operations[operation], field)
    if encoded is None:
        return None
    return histogram.quantile_ms(histogram.decode(encoded), quantile)


def operations_chart(report: RunReport) -> Chart | None:
    """Every operation's total latency at p50, p95 and p99 by level, and its time to first
    token where it streamed: one series each (click the legend to isolate one)."""
    pairs = _pairs(report)
    variants = _variants(report)
    operations = sorted({name for s, _ in pairs if s.client for name in s.client.operations})
    figure = go.Figure()
    for variant in variants:
        mine = [(s, r) for s, r in pairs if r.variant == variant]
        for operation in operations:
            for field, label in (("latency", "total"), ("ttft", "ttft")):
                for quantile_name, quantile in _QUANTILES:
                    drawn = [
                        (record, value)
                        for step, record in mine
                        if (value := _operation_ms(step, operation, field, quantile)) is not None
                    ]
                    if not drawn:
                        continue
                    figure.add_trace(
                        _steps_trace(
                            drawn,
                            _named(f"{operation} {label} {quantile_name}", variant, variants),
                            "%{x:,}: %{y:,.1f} ms, %{text}<extra>%{fullData.name}</extra>",
                            legendgroup=f"{variant}/{operation}/{label}",
                        )
                    )
    if not figure.data:
        return None
    _layout(figure, f"level ({report.spec.unit})", "latency (ms)", height=420)
    return Chart(
        id="chart-operations",
        title="Latency per operation by level",
        figure=figure,
        note="Each operation on its own, total latency and (for streams) time to first "
        "token; markers by the step's verdict. Click a legend entry to hide it.",
    )


def _limit_lines(
    figure: go.Figure, shape: PodShape, levels: list[int], variant: str, variants: list[str]
) -> None:
    """The pod's CPU and memory limits as dashed lines across the levels it ran."""
    for column, label, value in (
        (1, f"limit {format_cpu(shape.cpu)}", shape.cpu),
        (2, f"limit {format_bytes(shape.memory)}", shape.memory / 2**20),
    ):
        figure.add_trace(
            go.Scatter(
                x=[min(levels), max(levels)],
                y=[value, value],
                mode="lines",
                line=LIMIT_LINE,
                name=_named(label, variant, variants),
                hoverinfo="name",
            ),
            row=1,
            col=column,
        )


def resources_chart(report: RunReport) -> Chart | None:
    """The target's mean CPU and peak memory by level, beside the pod's limits."""
    pairs = _pairs(report)
    variants = _variants(report)
    unit = report.spec.unit
    figure = make_subplots(
        rows=1, cols=2, subplot_titles=("CPU (cores, mean)", "memory (MiB, peak working set)")
    )
    specs = report.spec.variant_specs()
    for variant in variants:
        mine = [r for _, r in pairs if r.variant == variant]
        for column, label, values in (
            (1, "CPU", [r.cpu_cores for r in mine]),
            (
                2,
                "memory",
                [None if r.memory_bytes is None else r.memory_bytes / 2**20 for r in mine],
            ),
        ):
            drawn = [(r, v) for r, v in zip(mine, values, strict=True) if v is not None]
            if not drawn:
                continue
            figure.add_trace(
                _steps_trace(
                    drawn,
                    _named(label, variant, variants),
                    "%{x:,}: %{y:,.3g}, %{text}<extra>%{fullData.name}</extra>",
                    mode="markers",
                    marker={"size": 9},
                ),
                row=1,
                col=column,
            )
        shape = _shape_of(report, specs, variant)
        levels = [r.level for r in mine]
        if shape is not None and levels:
            _limit_lines(figure, shape, levels, variant, variants)
    if not figure.data:
        return None
    _layout(figure, f"level ({unit})", "")
    return Chart(
        id="chart-resources",
        title="The target's resources by level",
        figure=figure,
        note="Mean CPU and peak memory of the target in each step, markers by verdict; the "
        "dashed lines are the pod's limits (requests == limits) when Plimsoll pinned it.",
    )


def _shape_of(
    report: RunReport, specs: dict[str, CapacityTestSpec], variant: str
) -> PodShape | None:
    """The pod shape `variant` was pinned to; None for an external target (no limits set)."""
    if report.spec.target.url is not None:
        return None
    if variant in specs:
        return specs[variant].target.resources
    # A guided shape search names its shapes as it goes: its table holds each one's shape.
    rows = {row.name: row for row in report.shapes.rows} if report.shapes else {}
    if variant in rows:
        return PodShape(cpu=rows[variant].cpu, memory=rows[variant].memory)
    return report.spec.target.resources


def ceilings_chart(report: RunReport) -> Chart | None:
    """Each variant's ceiling, with its range (last pass … first fail) as the error bar."""
    found = [(c, c.level) for c in report.ceilings if c.level is not None]
    if len(report.ceilings) < 2 or not found:
        return None
    figure = go.Figure(
        go.Bar(
            x=[c.variant for c, _ in found],
            y=[level for _, level in found],
            name="ceiling",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [c.high - level if c.high else 0 for c, level in found],
                "arrayminus": [level - c.low if c.low is not None else 0 for c, level in found],
            },
            text=[f"{c.limited_by.value}-bound" for c, _ in found],
            hovertemplate="%{x}: %{y:,}, %{text}<extra></extra>",
        )
    )
    _layout(figure, "variant", f"ceiling ({report.spec.unit})", height=340)
    return Chart(
        id="chart-ceilings",
        title="Ceilings per variant",
        figure=figure,
        note="The bar is the ceiling; the whisker runs from the last passing level to the "
        "first failing one above it.",
    )


def shapes_chart(report: RunReport) -> Chart | None:
    """What each pod shape costs per 1,000 units of load an hour; the cheapest in green."""
    table = report.shapes
    rows = [r for r in table.rows if r.cost_per_thousand is not None] if table else []
    if not rows:
        return None
    figure = go.Figure(
        go.Bar(
            x=[r.label for r in rows],
            y=[r.cost_per_thousand for r in rows],
            name="cost per 1,000 units an hour",
            marker={"color": [HELD if r.cheapest else "#1f77b4" for r in rows]},
            text=[f"ceiling {r.ceiling or 0:,} {r.unit}, {r.limited_by.value}-bound" for r in rows],
            hovertemplate="%{x}: %{y:,.3g}, %{text}<extra></extra>",
        )
    )
    currency = report.spec.cost.currency
    _layout(figure, "shape", f"{currency} per 1,000 {report.spec.unit} per hour", height=340)
    return Chart(id="chart-shapes", title="Cost per shape", figure=figure)


def level_charts(report: RunReport) -> list[Chart]:
    """The charts by level, in the page's order; a chart with nothing to draw is left out."""
    charts = [ceilings_chart(report), shapes_chart(report)]
    charts += [bound_chart(report, i, b) for i, b in enumerate(report.spec.pass_when.latency)]
    charts += [operations_chart(report), resources_chart(report)]
    return [chart for chart in charts if chart is not None]
