"""The `plimsoll` command line: one verb per user task.

`crd` prints the generated CustomResourceDefinition; `validate` checks files the
way the operator would. Verbs that start work (`run`, `operator`, `report`)
live in their own modules and register here, so this file stays a table of
contents.
"""

from __future__ import annotations

import sys
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Annotated

import typer

from plimsoll.api.crd import render_crd
from plimsoll.api.resource import SpecError
from plimsoll.cli.calibrate import calibrate
from plimsoll.cli.compare import compare_cmd
from plimsoll.cli.operator import operator_cmd
from plimsoll.cli.report import report
from plimsoll.cli.run import run
from plimsoll.cli.size import size
from plimsoll.cli.specfile import read_capacity_tests
from plimsoll.decide.workload_advice import workload_warnings

app = typer.Typer(
    name="plimsoll",
    help="Find the capacity ceiling of a service pinned to a pod shape.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"plimsoll {package_version('plimsoll')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the installed version and exit.",
        ),
    ] = False,
) -> None:
    """Find the capacity ceiling of a service pinned to a pod shape."""


@app.command()
def crd() -> None:
    """Print the CapacityTest CRD (generated from the API models)."""
    sys.stdout.write(render_crd())


@app.command()
def validate(
    files: Annotated[list[Path], typer.Argument(help="CapacityTest YAML files.")],
) -> None:
    """Check CapacityTest files; each mistake is reported with its field path."""
    failed = False
    for path in files:
        try:
            tests = read_capacity_tests(path)
        except SpecError as exc:
            failed = True
            typer.echo(f"{path}: invalid", err=True)
            for line in exc.problems:
                typer.echo(f"  {line}", err=True)
            continue
        names = ", ".join(t.metadata.name for t in tests)
        typer.echo(f"{path}: valid ({names})")
        for test in tests:
            for warning in workload_warnings(test.spec.workload):
                typer.echo(f"  warning ({test.metadata.name}): {warning}", err=True)
    if failed:
        raise typer.Exit(1)


app.command()(size)
app.command()(run)
app.command()(report)
app.command("compare")(compare_cmd)
app.command()(calibrate)
app.command("operator")(operator_cmd)


def main() -> None:
    app()
