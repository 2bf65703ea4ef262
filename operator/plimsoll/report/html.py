"""report.html from a `RunReport`: one self-contained page, interactive charts, no network.

A pure renderer: `render_html(report)` returns the page as text and touches no file.
`plimsoll.report.files` writes it beside report.md (after every step of `plimsoll
run`, and again at the end); `kubectl plimsoll report NAME --html FILE` renders it
from the report.json a cluster's operator stored. The layout is the jinja2 template
beside this module; the figures come from the same places report.md's do (the step
table's cells, the comparison's and the shapes' blocks, the ceiling's words), and the
charts from `plimsoll.report.html_chart` and `plimsoll.report.html_timeline_chart`
(plotly, imported only here and only when drawing: like the `*_chart` modules of
matplotlib, they are a workstation's, not the operator image's). plotly.js is
embedded once, in the page's head, so every chart draws offline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jinja2
import yaml

from plimsoll.api.report import RunReport
from plimsoll.api.shapes import shape_label
from plimsoll.api.status import Ceiling
from plimsoll.decide.confirmation import phrase
from plimsoll.report.comparison import comparison_blocks
from plimsoll.report.comparison import headline as comparison_headline
from plimsoll.report.latency_summary import SUMMARY_COLUMNS, summary_rows
from plimsoll.report.markdown import unreadable_contention
from plimsoll.report.sentence import format_quantity
from plimsoll.report.shapes import SHAPE_COLUMNS, shapes_rows
from plimsoll.report.streamed import STREAMED_COLUMNS, streamed_rows
from plimsoll.report.table import BESIDE_COLUMNS, COLUMNS, beside_rows, row

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("plimsoll.report", "templates"),
    autoescape=True,  # every figure and reason is text: a name with "<" stays text
    keep_trailing_newline=True,
)
_ENV.filters["quantity"] = format_quantity
# No plotly logo link in the mode bar: the page links nowhere.
CHART_CONFIG = {"displaylogo": False, "responsive": True}


class PlotlyMissingError(RuntimeError):
    """report.html's charts need plotly, which is in the `operator` extra."""


@dataclass(frozen=True)
class DrawnChart:
    id: str
    title: str
    note: str
    series: list[str]
    html: str


def _plotly() -> Any:
    try:
        import plotly.io
    except ModuleNotFoundError as exc:
        raise PlotlyMissingError(
            "report.html is drawn with plotly, which is not installed here: from a clone "
            "of Plimsoll, pip install '.[operator]' (the operator image leaves it out)"
        ) from exc
    return plotly.io


def _charts(report: RunReport) -> tuple[list[DrawnChart], list[DrawnChart]]:
    """The charts by level and the step timelines, each as its div and script."""
    pio = _plotly()
    from plimsoll.report.html_chart import level_charts
    from plimsoll.report.html_timeline_chart import timeline_charts

    def drawn(charts: list[Any]) -> list[DrawnChart]:
        return [
            DrawnChart(
                id=chart.id,
                title=chart.title,
                note=chart.note,
                series=chart.series,
                html=pio.to_html(
                    chart.figure,
                    full_html=False,
                    include_plotlyjs=False,
                    div_id=chart.id,
                    config=CHART_CONFIG,
                ),
            )
            for chart in charts
        ]

    return drawn(level_charts(report)), drawn(timeline_charts(report))


def _ceiling_cells(ceiling: Ceiling) -> list[str]:
    if ceiling.level is not None:
        level = f"{ceiling.level:,} {ceiling.unit}"
    else:
        level = "inconclusive" if ceiling.inconclusive else "no level passed"
    low = "—" if ceiling.low is None else f"{ceiling.low:,}"
    high = "—" if ceiling.high is None else f"{ceiling.high:,}"
    return [
        ceiling.variant,
        level,
        f"{low} … {high}",
        ", ".join(f"{level:,}" for level in ceiling.spread) or "—",
        ceiling.basis or "—",
        ceiling.limited_by.value,
        ceiling.headroom.summary or "—",
        "yes" if ceiling.complete else f"no: {ceiling.stop_reason}",
    ]


EXPERIMENT_COLUMNS = ["variant", "doubled", "shape", "level", "verdict", "why"]


def experiment_rows(report: RunReport) -> list[list[str]]:
    """The confirmation experiment's trials, one row each, for every variant that ran it."""
    rows = []
    for ceiling in report.ceilings:
        for trial in ceiling.confirmation.trials if ceiling.confirmation else []:
            rows.append(
                [
                    ceiling.variant,
                    trial.doubled.value,
                    shape_label(trial.shape),
                    f"{trial.level:,} {ceiling.unit}",
                    trial.verdict.value if trial.verdict else "not run",
                    "; ".join(trial.reasons) or "—",
                ]
            )
    return rows


def experiment_findings(report: RunReport) -> list[str]:
    """Each variant's finding in words: 'default: confirmed: at 2× CPU …'."""
    return [
        f"{c.variant}: {phrase(c.confirmation, c.unit)}"
        for c in report.ceilings
        if c.confirmation is not None
    ]


CEILING_COLUMNS = [
    "variant",
    "ceiling",
    "range (pass … fail)",
    "spread",
    "what it rests on",
    "limited by",
    "headroom",
    "complete",
]


def spec_yaml(report: RunReport) -> str:
    """The spec as run, from the report's own serialisation: credentials already redacted."""
    return yaml.safe_dump(report.to_wire()["spec"], sort_keys=False, allow_unicode=True)


def render_html(report: RunReport) -> str:
    """The whole page. Raises `PlotlyMissingError` where plotly is not installed."""
    _plotly()
    from plotly.offline import get_plotlyjs

    level_charts, timelines = _charts(report)
    comparison = report.comparison
    return _ENV.get_template("report.html.j2").render(
        report=report,
        unit=report.spec.unit,
        plotly_js=get_plotlyjs(),
        plotly_version=_version(),
        ceiling_columns=CEILING_COLUMNS,
        ceilings=[_ceiling_cells(c) for c in report.ceilings],
        experiment_columns=EXPERIMENT_COLUMNS,
        experiment=experiment_rows(report),
        findings=experiment_findings(report),
        level_charts=level_charts,
        timelines=timelines,
        columns=[*COLUMNS, "reasons"],
        rows=[row(step, record) for step, record in report.step_pairs()],
        beside_columns=BESIDE_COLUMNS,
        beside=[cells for step in report.steps for cells in beside_rows(step)],
        streamed_columns=STREAMED_COLUMNS,
        streamed=[cells for step in report.steps for cells in streamed_rows(step)],
        summary_columns=SUMMARY_COLUMNS,
        summary=[cells for step in report.steps for cells in summary_rows(step)],
        comparison_headline=(
            (comparison.headline or comparison_headline(comparison)) if comparison else ""
        ),
        comparison_blocks=comparison_blocks(comparison) if comparison else [],
        against_baseline=[
            (c.headline or comparison_headline(c), comparison_blocks(c))
            for c in report.against_baseline
        ],
        shape_columns=SHAPE_COLUMNS,
        shapes=shapes_rows(report.shapes, report.spec.cost.currency) if report.shapes else [],
        unreadable=unreadable_contention(report),
        busy_steps=[s.index for s in report.steps if s.contention and s.contention.busy],
        spec_yaml=spec_yaml(report),
    )


def _version() -> str:
    from importlib.metadata import version

    return version("plotly")
