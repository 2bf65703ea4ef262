"""`plimsoll size`: turn a measured ceiling into a deployment plan.

Takes the per-pod ceiling, and the memory per held stream when the run probed
streams, from a `report.json` (or `--per-pod`, `--memory-per-stream`), and the user's
own figures (peak, growth, zones, upstream latency, streams), and prints the
plan with the line that derives each number (see `plimsoll.decide.sizing`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from plimsoll.api.report import RunReport
from plimsoll.api.resource import describe_validation_error
from plimsoll.api.sizing import SizingInput
from plimsoll.decide.sizing import plan


def _from_report(report_path: Path) -> tuple[float, str, float | None]:
    """The per-pod ceiling, its unit, and the memory per held stream of the same variant
    (None when the run had no streams probe)."""
    report = RunReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    if report.ceiling is None or report.ceiling.level is None:
        raise typer.BadParameter(
            f"{report_path} holds no ceiling: no level passed", param_hint="--report"
        )
    ceiling, level = report.ceiling, report.ceiling.level
    per_stream = next(
        (m.bytes_per_stream for m in report.stream_memory if m.variant == ceiling.variant), None
    )
    return float(level), ceiling.unit, per_stream


def size(
    peak: Annotated[float, typer.Option(help="Expected peak load, in the test's unit.")],
    report: Annotated[Path | None, typer.Option(help="report.json of a finished run.")] = None,
    per_pod: Annotated[
        float | None, typer.Option(help="Per-pod ceiling (without --report).")
    ] = None,
    unit: Annotated[str, typer.Option(help="Unit of --per-pod: rps or users.")] = "rps",
    growth: Annotated[float, typer.Option(help="Plan for peak x growth.")] = 1.0,
    utilisation: Annotated[str, typer.Option(help="Share of the ceiling to run at.")] = "60%",
    zones: Annotated[int, typer.Option(help="Zones to spread over.")] = 1,
    survive_zone_loss: Annotated[
        bool, typer.Option(help="Keep capacity after a zone loss.")
    ] = True,
    upstream_latency: Annotated[str | None, typer.Option(help="Upstream p99, e.g. 200ms.")] = None,
    streams: Annotated[int, typer.Option(help="Concurrent streams in all.")] = 0,
    memory_per_stream: Annotated[
        str | None, typer.Option(help="e.g. 72Ki; default: the report's streams probe.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Plan a deployment from a measured per-pod ceiling."""
    measured_per_stream: float | None = None
    if report is not None:
        per_pod, unit, measured_per_stream = _from_report(report)
    if memory_per_stream is None and measured_per_stream is not None and measured_per_stream > 0:
        memory_per_stream = f"{measured_per_stream:.0f}"  # bytes, as the streams probe measured
    if per_pod is None:
        raise typer.BadParameter("give --report FILE or --per-pod N", param_hint="--per-pod")
    try:
        sizing = SizingInput(
            per_pod=per_pod,
            unit=unit,
            peak=peak,
            growth=growth,
            utilisation=utilisation,
            zones=zones,
            survive_zone_loss=survive_zone_loss,
            upstream_latency=upstream_latency,
            streams=streams,
            memory_per_stream=memory_per_stream,
        )
    except ValidationError as exc:
        for problem in describe_validation_error(exc):
            typer.echo(f"invalid: {problem}", err=True)
        raise typer.Exit(2) from exc
    result = plan(sizing)
    if as_json:
        typer.echo(result.model_dump_json(by_alias=True, indent=2))
        return
    table = Table("Item", "Derivation", "Result", title=f"Plan: {result.pods} pods")
    for line in result.lines:
        table.add_row(line.item, line.derivation, line.result)
    Console().print(table)
