"""Writing a run's output folder: report.json, report.html, report.md and the charts.

`plimsoll run` calls `write_progress` after every step (report.json and report.html,
so an interrupted run keeps what it measured and the page shows it) and
`write_report` at the end; `plimsoll report FILE` calls `write_report` on a
report.json read back with `read_report`.
"""

from __future__ import annotations

import os
from pathlib import Path

from plimsoll.api.report import RunReport
from plimsoll.api.spec import Strategy
from plimsoll.decide.step_summary import record_of


def write_json(report: RunReport, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.json"
    partial = path.with_suffix(".json.tmp")
    partial.write_text(report.to_wire_json(indent=2), encoding="utf-8")
    os.replace(partial, path)  # a reader never sees half a file
    return path


def write_html(report: RunReport, out: Path) -> Path:
    """report.html, replaced whole: a browser reloading it mid-run never reads half a page."""
    from plimsoll.report.html import render_html  # plotly: only where a page is drawn

    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    partial = path.with_suffix(".html.tmp")
    partial.write_text(render_html(report), encoding="utf-8")
    os.replace(partial, path)
    return path


def write_progress(report: RunReport, out: Path) -> list[Path]:
    """After a step: report.json and report.html (the Markdown and PNGs wait for the end)."""
    return [write_json(report, out), write_html(report, out)]


def read_report(path: Path) -> RunReport:
    """A report.json read back; one written before reports kept each step's record gets
    its records derived here, so every reader finds them."""
    report = RunReport.model_validate_json(path.read_text(encoding="utf-8"))
    if report.steps and not report.records:
        report.records = [record_of(step) for step in report.steps]
    return report


def write_report(report: RunReport, out: Path) -> list[Path]:
    """report.json, report.md, report.html and the charts; the paths written (report.md
    second: `plimsoll run` names it)."""
    from plimsoll.report.charts import draw_charts
    from plimsoll.report.comparison import compare_variants
    from plimsoll.report.markdown import render_markdown

    flight = report.spec.search.strategy is Strategy.AUTOSCALE  # nothing to compare (assemble)
    if report.comparison is None and not flight:  # a report.json from before comparisons were kept
        report.comparison = compare_variants(report, report.unit_costs)
    written = [write_json(report, out)]
    charts = draw_charts(report, out)
    markdown = out / "report.md"
    markdown.write_text(render_markdown(report, charts), encoding="utf-8")
    written.append(markdown)
    written.append(write_html(report, out))
    written.extend(out / name for name in charts)
    return written
