"""report.md from a `RunReport`, through the jinja2 template beside this module.

Called by `plimsoll run` at the end (and after each step, cheaply) and by
`plimsoll report FILE`. The template only lays out; the figures come from
`plimsoll.report.table` and the sentence from `plimsoll.report.sentence`.
"""

from __future__ import annotations

from collections.abc import Sequence

import jinja2

from plimsoll.api.report import RunReport
from plimsoll.report.changepoints import changepoints_markdown
from plimsoll.report.comparison import comparison_markdown
from plimsoll.report.extra_figures import extra_table
from plimsoll.report.flight import flight_markdown
from plimsoll.report.latency_summary import SUMMARY_COLUMNS, summary_rows
from plimsoll.report.sentence import format_quantity
from plimsoll.report.shapes import shapes_markdown
from plimsoll.report.streamed import STREAMED_COLUMNS, streamed_rows
from plimsoll.report.table import BESIDE_COLUMNS, COLUMNS, beside_rows, row

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("plimsoll.report", "templates"),
    autoescape=False,  # Markdown, not HTML
    keep_trailing_newline=True,
    trim_blocks=False,
)
_ENV.filters["quantity"] = format_quantity


def render_markdown(report: RunReport, charts: Sequence[str] = ()) -> str:
    template = _ENV.get_template("report.md.j2")
    extra_columns, extra_rows = extra_table(report)
    return template.render(
        extra_columns=extra_columns,
        extra_rows=extra_rows,
        report=report,
        unit=report.spec.unit,
        columns=COLUMNS,
        rows=[row(step, record) for step, record in report.step_pairs()],
        beside_columns=BESIDE_COLUMNS,
        beside=[cells for step in report.steps for cells in beside_rows(step)],
        streamed_columns=STREAMED_COLUMNS,
        streamed=[cells for step in report.steps for cells in streamed_rows(step)],
        summary_columns=SUMMARY_COLUMNS,
        summary=[cells for step in report.steps for cells in summary_rows(step)],
        charts=list(charts),
        comparison=comparison_markdown(report.comparison) if report.comparison else "",
        shapes=(shapes_markdown(report.shapes, report.spec.cost.currency) if report.shapes else ""),
        changepoints=changepoints_markdown(report.changepoints),
        flight=flight_markdown(report),
        unreadable=unreadable_contention(report),
        busy_steps=[s.index for s in report.steps if s.contention and s.contention.busy],
    )


def unreadable_contention(report: RunReport) -> list[str]:
    """The contention figures no step could read, once each: the report says what it could
    not check, so a quiet verdict is never taken for a checked one."""
    seen: dict[str, None] = {}
    for step in report.steps:
        if step.contention is not None:
            seen.update(dict.fromkeys(step.contention.unreadable))
    return list(seen)
