"""The end of `plimsoll run`: the report on disk, the summary, `--junit`, and the exit code.

Called by `plimsoll.cli.run` once the runner returned its report (also a failed one).
It writes report.json, report.md and the charts, prints the sentence per variant, a
steps table fitted to the terminal (`plimsoll.report.compact_table`), the comparison
with `--baseline`, and decides the exit code from the run's cases
(`plimsoll.decide.pipeline_gate`): 0 within the bar, 99 answered but refused (a ceiling
below `--fail-below`, a regression beyond `--fail-on-regression`, a proof that did not
hold), 1 could not complete. The same cases go to `--junit FILE`.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import typer

from plimsoll.api.comparison import Comparison
from plimsoll.api.report import RunReport
from plimsoll.cli.compare import regression_gate, with_headlines
from plimsoll.cli.exits import exit_code
from plimsoll.decide.across_runs import LabelledRun, compare_runs
from plimsoll.decide.pipeline_gate import Case, report_answer, report_cases
from plimsoll.report.compact_table import compact_table
from plimsoll.report.files import write_report
from plimsoll.report.junit import write_junit

_LOG_WIDTH = 80  # the steps table in a pipe or a log: what any viewer shows whole


@dataclass(frozen=True)
class Gates:
    """What `plimsoll run` was asked to hold the run against, beyond the spec's bar."""

    baseline: RunReport | None = None
    threshold: float | None = None  # --fail-on-regression, as a fraction
    fail_below: int | None = None
    junit: Path | None = None


def terminal_width() -> int | None:
    """COLUMNS when set, else the terminal's width; None for a pipe or a CI log, whose
    lines a script greps and a log viewer wraps."""
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def _say(text: str, width: int | None, *, err: bool = False) -> None:
    """`text` wrapped to the terminal's width; a word longer than it (a path) stays whole."""
    if width is None:
        typer.echo(text, err=err)
        return
    lines = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)
    for line in lines or [""]:
        typer.echo(line, err=err)


def finish(report: RunReport, out: Path, gates: Gates, *, quiet: bool = False) -> int:
    """Write and print what the run found; the exit code."""
    compared = _compared(gates.baseline, report) if gates.baseline is not None else None
    if compared:
        report.against_baseline = compared  # in report.json and report.html, not only printed
    written = write_report(report, out)
    width = terminal_width()
    for line in report.summary:
        _say(line, width)
    if not quiet:
        for line in compact_table(report, width or _LOG_WIDTH):
            typer.echo(line)
    if report.comparison is not None:
        _say(report.comparison.headline, width)
    if report.message:
        _say(report.message, width, err=True)
    _say(f"report: {written[1]} (and report.html, report.json, the charts beside it)", width)
    regressions: dict[str, list[str]] = {}
    extra: list[Case] = []
    if gates.baseline is not None:
        found = against_baseline(compared, gates.threshold)
        if found is None:  # a gate that cannot judge must not pass silently
            extra.append(Case("regression gate", None, "cannot compare with the baseline"))
        else:
            regressions = found
    cases = [*report_cases(report, regressions, gates.fail_below, proof=report.proof), *extra]
    if gates.junit is not None:
        typer.echo(f"junit: {write_junit(report, cases, gates.junit)}")
    for case in cases:
        if case.passed is False:
            typer.echo(f"NO: {case.name}: {case.message}", err=True)
    return exit_code(report_answer(report, cases))


def _compared(old: RunReport, new: RunReport) -> list[Comparison] | None:
    """This run's ceilings beside the baseline's, or None (said why) when they cannot be."""
    try:
        runs = [
            LabelledRun("baseline", old, old.unit_costs),
            LabelledRun("this run", new, new.unit_costs),
        ]
        return with_headlines(compare_runs(runs))
    except ValueError as exc:
        typer.echo(f"cannot compare with the baseline: {exc}", err=True)
        return None


def against_baseline(
    comparisons: list[Comparison] | None, threshold: float | None
) -> dict[str, list[str]] | None:
    """Print how this run's ceilings stand against the baseline's; the regression gate's
    lines per variant (none without a threshold), or None when the runs could not be
    compared and a threshold was asked for."""
    if comparisons is None:
        return None if threshold is not None else {}
    found: dict[str, list[str]] = {}
    for comparison in comparisons:
        typer.echo(comparison.headline)
        if threshold is None:
            continue
        variant = comparison.baseline.partition(":")[2] or "default"
        lines = regression_gate([comparison], threshold)
        for line in lines:
            typer.echo(line, err=True)
        if lines:
            found[variant] = lines
    return found
