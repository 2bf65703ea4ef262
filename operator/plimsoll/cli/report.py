"""`plimsoll report FILE`: render report.md, report.html and the charts again from a report.json.

For a report produced elsewhere (the operator's ConfigMap, a CI artifact) or
after changing the template: the JSON is the source of truth, everything else
is drawn from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from plimsoll.report.files import read_report, write_report


def report(
    file: Annotated[Path, typer.Argument(help="A report.json written by `plimsoll run`.")],
    out: Annotated[
        Path | None, typer.Option(help="Folder to write into (default: beside it).")
    ] = None,
) -> None:
    """Render report.md, report.html and charts (PNG, SVG) from a report.json."""
    try:
        loaded = read_report(file)
    except (OSError, ValidationError) as exc:
        typer.echo(f"{file}: not a Plimsoll report.json: {exc}", err=True)
        raise typer.Exit(2) from exc
    for path in write_report(loaded, out or file.parent):
        typer.echo(str(path))
