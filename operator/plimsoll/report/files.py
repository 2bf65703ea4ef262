"""Writing a run's output folder: report.json, report.md and the charts.

`plimsoll run` calls `write_json` after every step (so an interrupted run
keeps what it measured) and `write_report` at the end; `plimsoll report FILE`
calls `write_report` on a report.json read back with `read_report`.
"""

from __future__ import annotations

import os
from pathlib import Path

from plimsoll.api.report import RunReport
from plimsoll.decide.step_summary import record_of


def write_json(report: RunReport, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.json"
    partial = path.with_suffix(".json.tmp")
    partial.write_text(report.to_wire_json(indent=2), encoding="utf-8")
    os.replace(partial, path)  # a reader never sees half a file
    return path


def read_report(path: Path) -> RunReport:
    """A report.json read back; one written before reports kept each step's record gets
    its records derived here, so every reader finds them."""
    report = RunReport.model_validate_json(path.read_text(encoding="utf-8"))
    if report.steps and not report.records:
        report.records = [record_of(step) for step in report.steps]
    return report


def write_report(report: RunReport, out: Path) -> list[Path]:
    """report.json, report.md and the charts; the paths written."""
    from plimsoll.report.charts import draw_charts
    from plimsoll.report.comparison import compare_variants
    from plimsoll.report.markdown import render_markdown

    if report.comparison is None:  # a report.json from before comparisons were kept
        report.comparison = compare_variants(report)
    written = [write_json(report, out)]
    charts = draw_charts(report, out)
    markdown = out / "report.md"
    markdown.write_text(render_markdown(report, charts), encoding="utf-8")
    written.append(markdown)
    written.extend(out / name for name in charts)
    return written
