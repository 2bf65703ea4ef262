"""`plimsoll compare A/report.json B/report.json [...]`: the same comparison across runs.

Releases, days, machines: each report.json is a run, labelled by its folder
(or `--label`), the first the baseline unless `--baseline LABEL` names
another. Prints the comparison as Markdown (the tables report.md opens with)
or, with `--json`, as JSON. `--fail-on-regression 10%` makes it a CI gate:
exit 99 when a ceiling dropped by more than the threshold *and* outside noise
(`plimsoll.decide.difference`). Exit 2 when a report cannot be read. A report
whose run had `regression.method: changepoint` adds the changes the operator found
in that test's history, per run.
`plimsoll run --baseline` applies the same gate through `regression_gate`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from plimsoll.api.comparison import Comparison
from plimsoll.api.report import RunReport
from plimsoll.api.units import parse_fraction
from plimsoll.cli.exits import EXIT_INVALID_SPEC, EXIT_OK, EXIT_REGRESSED
from plimsoll.cli.help_text import epilog
from plimsoll.decide.across_runs import LabelledRun, compare_runs, regressions
from plimsoll.report.changepoints import changepoints_markdown
from plimsoll.report.comparison import comparison_markdown, headline
from plimsoll.report.files import read_report

COMPARE_EPILOG = epilog(
    "plimsoll compare v1/report.json v2/report.json",
    "plimsoll compare a/report.json b/report.json --fail-on-regression 10%",
    "plimsoll compare a/report.json b/report.json --label v1 --label v2 --json",
    exit_codes=True,
)


def parse_threshold(value: str) -> float:
    """'10%' or '0.1' as a fraction; a clear error naming the option otherwise."""
    try:
        threshold = parse_fraction(value)
    except (ValueError, TypeError) as exc:
        raise typer.BadParameter(
            f"--fail-on-regression {value!r}: give a share such as '10%' or '0.1'"
        ) from exc
    if not 0 < threshold < 1:
        raise typer.BadParameter(
            f"--fail-on-regression {value!r}: give a share between 0% and 100%, e.g. '10%'"
        )
    return threshold


def _labels(files: Sequence[Path], given: Sequence[str]) -> list[str]:
    if given:
        if len(given) != len(files):
            raise typer.BadParameter(f"{len(given)} --label for {len(files)} reports: one each")
        labels = list(given)
    else:
        labels = [path.resolve().parent.name or str(path) for path in files]
        if len(set(labels)) != len(labels):  # same folder names: the paths tell them apart
            labels = [str(path) for path in files]
    if len(set(labels)) != len(labels):
        raise typer.BadParameter(f"labels must differ: {labels}")
    return labels


def regression_gate(comparisons: Sequence[Comparison], threshold: float) -> list[str]:
    """One line per regressed ceiling; empty when the gate passes."""
    lines = []
    for comparison in comparisons:
        base = next(v for v in comparison.variants if v.name == comparison.baseline)
        for row in regressions(comparison, threshold):
            level = f"{row.ceiling:,}" if row.ceiling is not None else "no level"
            lines.append(
                f"REGRESSION: {row.name} holds {level} {comparison.unit} against "
                f"{base.name}'s {base.ceiling:,} ({row.delta_percent or -100:+.1f}%: more "
                f"than {threshold:.0%} lower, and outside noise)"
            )
    return lines


def with_headlines(comparisons: list[Comparison]) -> list[Comparison]:
    for comparison in comparisons:
        comparison.headline = headline(comparison)
    return comparisons


def _section(comparison: Comparison, titled: bool) -> str:
    """One comparison; under a heading naming its variant when the runs hold several."""
    text = comparison_markdown(comparison)
    if not titled:
        return text
    variant = comparison.baseline.partition(":")[2] or comparison.baseline
    return f"## Variant {variant}\n\n{text}"


def changepoint_sections(reports: Mapping[str, RunReport]) -> list[str]:
    """Each run's changepoints (from its report, by label), under a heading naming it."""
    return [
        text
        for label, report in reports.items()
        if (text := changepoints_markdown(report.changepoints, f"Changepoints: {label}"))
    ]


def compare_cmd(
    files: Annotated[list[Path], typer.Argument(help="Two or more report.json files.")],
    baseline: Annotated[
        str | None, typer.Option(help="Label of the baseline run (default: the first).")
    ] = None,
    label: Annotated[
        list[str] | None, typer.Option(help="A label per report, in order (default: folders).")
    ] = None,
    fail_on_regression: Annotated[
        str | None,
        typer.Option(
            help="Exit 99 when a ceiling dropped by more than this (e.g. 10%) and outside noise."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, not Markdown.")] = False,
) -> None:
    """Compare the ceilings of several runs: Δ, noise, costs.

    Releases, days, machines: each report.json is a run, the first the baseline."""
    threshold = parse_threshold(fail_on_regression) if fail_on_regression else None
    labels = _labels(files, label or [])
    runs, reports = [], {}
    for path, name in zip(files, labels, strict=True):
        try:
            report = reports[name] = read_report(path)
            runs.append(LabelledRun(name, report, report.unit_costs, str(path)))
        except (OSError, ValidationError) as exc:
            typer.echo(f"{path}: not a Plimsoll report.json: {exc}", err=True)
            raise typer.Exit(EXIT_INVALID_SPEC) from exc
    try:
        comparisons = with_headlines(compare_runs(runs, baseline))
    except ValueError as exc:
        typer.echo(f"cannot compare: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    if as_json:
        typer.echo(json.dumps([c.to_wire() for c in comparisons], indent=2))
    else:
        sections = [_section(c, len(comparisons) > 1) for c in comparisons]
        typer.echo("\n".join([*sections, *changepoint_sections(reports)]))
    failures = regression_gate(comparisons, threshold) if threshold is not None else []
    for line in failures:
        typer.echo(line, err=True)
    raise typer.Exit(EXIT_REGRESSED if failures else EXIT_OK)
