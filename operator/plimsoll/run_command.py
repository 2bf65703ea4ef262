"""`plimsoll run FILE`: the whole capacity test on this machine, with the local platform.

Reads and validates the spec (exit 2 when invalid), runs `plimsoll.runner`
with a `LocalPlatform` per variant and the console sink, writes report.json,
report.md and the charts into `--out`, prints the ceiling sentence, and exits
0 when every ceiling was found, 1 when the test could not complete. Ctrl-C
stops every process and still writes the partial report.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.resource import CapacityTest, SpecError
from plimsoll.api.spec import Variant
from plimsoll.platforms.local import LocalPlatform
from plimsoll.report.files import write_report
from plimsoll.report.live import ConsoleSink
from plimsoll.runner import run_test
from plimsoll.specfile import read_capacity_tests

EXIT_OK, EXIT_INCOMPLETE, EXIT_INVALID_SPEC = 0, 1, 2


def _select(tests: list[CapacityTest], variant: str | None) -> CapacityTest:
    test = tests[0]
    if variant is None:
        return test
    chosen = [v for v in test.spec.variants if v.name == variant]
    if not chosen:
        names = [v.name for v in test.spec.variants] or ["(none)"]
        raise SpecError([f"spec.variants: no variant {variant!r}; the spec has {names}"])
    return test.model_copy(update={"spec": test.spec.model_copy(update={"variants": chosen})})


def _shorten(test: CapacityTest, seconds: float | None) -> CapacityTest:
    if seconds is None:
        return test
    trial = test.spec.trial.model_copy(update={"duration": seconds})
    return test.model_copy(update={"spec": test.spec.model_copy(update={"trial": trial})})


async def _run(test: CapacityTest, out: Path, quiet: bool, cgroup_root: Path | None) -> RunReport:
    run_id = f"{test.metadata.name}-{uuid.uuid4().hex[:6]}"
    sink = ConsoleSink(test, out, quiet=quiet)

    def make_platform(variant: Variant | None) -> LocalPlatform:
        name = variant.name if variant else "default"
        return LocalPlatform(f"{run_id}-{name}", out / "work" / name, cgroup_root=cgroup_root)

    return await run_test(test, make_platform, sink)


def run(
    file: Annotated[Path, typer.Argument(help="A CapacityTest YAML file.")],
    out: Annotated[Path | None, typer.Option(help="Output folder for the report.")] = None,
    variant: Annotated[str | None, typer.Option(help="Run only this variant.")] = None,
    prometheus: Annotated[
        str | None, typer.Option(help="Read target metrics from this Prometheus URL.")
    ] = None,
    trial_duration: Annotated[
        float | None, typer.Option(help="Override trial.duration (seconds), for short runs.")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="Print only the result.")] = False,
) -> None:
    """Find the ceiling of a CapacityTest on this machine (local processes, cgroup pinning)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        test = _shorten(_select(read_capacity_tests(file), variant), trial_duration)
    except SpecError as exc:
        typer.echo(f"{file}: invalid", err=True)
        for line in exc.problems:
            typer.echo(f"  {line}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    if prometheus is not None:
        typer.echo(
            "--prometheus: the local platform reads the target's cgroup directly; "
            "reading a Prometheus server is not built into `plimsoll run` yet",
            err=True,
        )
        raise typer.Exit(EXIT_INCOMPLETE)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    out = out or Path("plimsoll-out") / f"{test.metadata.name}-{stamp}"
    cgroup_root = os.environ.get("PLIMSOLL_CGROUP_ROOT")
    try:
        report = asyncio.run(_run(test, out, quiet, Path(cgroup_root) if cgroup_root else None))
    except KeyboardInterrupt:
        typer.echo(f"interrupted: partial report in {out / 'report.json'}", err=True)
        raise typer.Exit(EXIT_INCOMPLETE) from None
    written = write_report(report, out)
    for line in report.summary:
        typer.echo(line)
    if report.message:
        typer.echo(report.message, err=True)
    typer.echo(f"report: {written[1]} (and report.json, charts) in {out}")
    raise typer.Exit(EXIT_OK if report.outcome is Outcome.SUCCEEDED else EXIT_INCOMPLETE)
