"""`plimsoll run FILE`: the whole capacity test on this machine, with the local platform.

Reads and validates the spec (exit 2 when invalid), serves the started
processes' figures under cAdvisor's names on `--exporter-listen` (printed at
start, so a Prometheus can scrape it), runs `plimsoll.run.runner` with a
`LocalPlatform` per variant and the console sink (reading the resources back
from `--prometheus` or `metrics.prometheusUrl` when given), writes report.json,
report.md and the charts into `--out`, prints the ceiling sentence, and exits
0 when every ceiling was found, 1 when the test could not complete. Ctrl-C
stops every process and still writes the partial report. With `--baseline
OLD/report.json` it compares the new ceilings with the old ones, and with
`--fail-on-regression 10%` exits 1 on a regression (the rule of `plimsoll
compare`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.resource import CapacityTest, SpecError
from plimsoll.api.shapes import shape_name
from plimsoll.api.spec import Variant
from plimsoll.api.target import PodShape
from plimsoll.cli.compare import parse_threshold, regression_gate, with_headlines
from plimsoll.cli.exits import (
    EXIT_INCOMPLETE,
    EXIT_INVALID_SPEC,
    EXIT_NOT_PROVED,
    EXIT_OK,
    EXIT_REGRESSED,
)
from plimsoll.cli.spec_file import read_capacity_tests
from plimsoll.decide.across_runs import LabelledRun, compare_runs
from plimsoll.decide.shape_search import grid
from plimsoll.metrics.exporter import CadvisorExporter
from plimsoll.platforms.local import leftovers
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.files import read_report, write_report
from plimsoll.report.live import ConsoleSink
from plimsoll.run.runner import run_test


def _select(tests: list[CapacityTest], variant: str | None) -> CapacityTest:
    """The first test, narrowed to `--variant` when given: a variant's name, or a shape's
    (an explicit shape, or one of a guided search's grid, measured alone)."""
    test = tests[0]
    if variant is None:
        return test
    spec = test.spec
    try:
        narrowed = spec.narrowed_to(variant)
    except KeyError:
        shapes = spec.shapes
        if shapes is not None and shapes.search is not None and spec.target.resources:
            cpus, memories = grid(shapes.search, spec.target.resources)
            named = {
                shape_name(s): s
                for s in (PodShape(cpu=c, memory=m) for c in cpus for m in memories)
            }
            if variant in named:
                return test.model_copy(update={"spec": spec.measuring_only(named[variant])})
            raise SpecError(
                [
                    f"spec.shapes.search: no shape {variant!r} in its grid; its shapes are "
                    f"{sorted(named)}"
                ]
            ) from None
        if shapes is not None and shapes.explicit is not None:
            names = [shape_name(s) for s in shapes.explicit]
            raise SpecError(
                [f"spec.shapes.explicit: no shape {variant!r}; the spec has {names}"]
            ) from None
        names = [v.name for v in spec.variants] or ["(none)"]
        raise SpecError([f"spec.variants: no variant {variant!r}; the spec has {names}"]) from None
    return test.model_copy(update={"spec": narrowed})


def _shorten(
    test: CapacityTest, seconds: float | None, warm_up: float | None = None
) -> CapacityTest:
    """The test with `--trial-duration` and `--warm-up` in place of the spec's."""
    update = {"duration": seconds, "warm_up": warm_up}
    update = {key: value for key, value in update.items() if value is not None}
    if not update:
        return test
    trial = test.spec.trial.model_copy(update=update)
    return test.model_copy(update={"spec": test.spec.model_copy(update={"trial": trial})})


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise typer.BadParameter(f"{value!r}: give HOST:PORT, e.g. 127.0.0.1:9464 (port 0: any)")
    return host, int(port)


async def _run(
    test: CapacityTest,
    out: Path,
    quiet: bool,
    cgroup_root: Path | None,
    listen: tuple[str, int],
    prometheus: str | None,
    scrape_wait: float,
) -> RunReport:
    run_id = f"{test.metadata.name}-{uuid.uuid4().hex[:6]}"
    # A run killed outright (SIGKILL) could not stop what it started: reap that first.
    for line in leftovers.reap_orphans():
        typer.echo(f"earlier run: {line}", err=True)
    leftovers.register(run_id, cgroup_root)
    try:
        return await _run_registered(
            test, run_id, out, quiet, cgroup_root, listen, prometheus, scrape_wait
        )
    finally:
        leftovers.forget(run_id)  # reached only once every process was stopped


async def _run_registered(
    test: CapacityTest,
    run_id: str,
    out: Path,
    quiet: bool,
    cgroup_root: Path | None,
    listen: tuple[str, int],
    prometheus: str | None,
    scrape_wait: float,
) -> RunReport:
    sink = ConsoleSink(test, out, quiet=quiet)
    # One exporter for the whole run: every variant registers its processes on it, so
    # the address a user gave their Prometheus holds for the run.
    exporter = CadvisorExporter(port=listen[1], host=listen[0])
    try:
        await exporter.start()
    except OSError as exc:
        raise RunSetupError(f"--exporter-listen {listen[0]}:{listen[1]}: {exc}") from exc
    typer.echo(f"exporter: {exporter.url} (cAdvisor metric names; scrape it)", err=True)
    if prometheus is not None:
        typer.echo(f"metrics: read from Prometheus at {prometheus}", err=True)

    def make_platform(variant: Variant | None) -> LocalPlatform:
        name = variant.name if variant else "default"
        return LocalPlatform(
            f"{run_id}-{name}",
            out / "work" / name,
            cgroup_root=cgroup_root,
            exporter=exporter,
            prometheus_url=prometheus,
            scrape_wait=scrape_wait,
        )

    try:
        return await run_test(test, make_platform, sink)
    finally:
        await exporter.stop()


class RunSetupError(RuntimeError):
    """The run could not begin (e.g. the exporter's address is taken)."""


def _stop_like_ctrl_c(signum: int, frame: object) -> None:
    del signum, frame
    signal.raise_signal(signal.SIGINT)


def _stop_on_terminate_and_hangup() -> None:
    """SIGTERM (kill, systemd, CI) and SIGHUP (the terminal closed) stop the run as
    Ctrl-C does: asyncio's SIGINT handling cancels the run, whose clean-up stops every
    process and removes every cgroup before the runner exits."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_like_ctrl_c)


def run(
    file: Annotated[Path, typer.Argument(help="A CapacityTest YAML file.")],
    out: Annotated[Path | None, typer.Option(help="Output folder for the report.")] = None,
    variant: Annotated[
        str | None,
        typer.Option(
            help="Run only this variant, or this shape of spec.shapes (its name, e.g. "
            "c500m-m1gi: an explicit shape, or one of a search's grid), priced alone."
        ),
    ] = None,
    prometheus: Annotated[
        str | None,
        typer.Option(
            help="Read resources from this Prometheus (it must scrape --exporter-listen); "
            "default: spec.metrics.prometheusUrl, else the cgroups directly."
        ),
    ] = None,
    exporter_listen: Annotated[
        str,
        typer.Option(
            help="HOST:PORT of the cAdvisor-style /metrics of the started processes "
            "(port 0: any free one, printed at start)."
        ),
    ] = "127.0.0.1:0",
    scrape_wait: Annotated[
        float,
        typer.Option(
            help="With Prometheus: seconds to wait, at start, until it has scraped the exporter."
        ),
    ] = 120.0,
    trial_duration: Annotated[
        float | None, typer.Option(help="Override trial.duration (seconds), for short runs.")
    ] = None,
    warm_up: Annotated[
        float | None,
        typer.Option(help="Override trial.warmUp (seconds), for short runs.", min=0),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="Print only the result.")] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(help="A report.json of an earlier run to compare the ceilings with."),
    ] = None,
    fail_on_regression: Annotated[
        str | None,
        typer.Option(
            help="With --baseline: exit 1 when a ceiling dropped by more than this (e.g. 10%) "
            "and outside noise."
        ),
    ] = None,
) -> None:
    """Find the ceiling of a CapacityTest on this machine (local processes, cgroup pinning)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        test = _shorten(_select(read_capacity_tests(file), variant), trial_duration, warm_up)
    except SpecError as exc:
        typer.echo(f"{file}: invalid", err=True)
        for line in exc.problems:
            typer.echo(f"  {line}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    listen = _listen(exporter_listen)
    threshold = parse_threshold(fail_on_regression) if fail_on_regression else None
    if threshold is not None and baseline is None:
        raise typer.BadParameter("--fail-on-regression needs --baseline OLD/report.json")
    old = _read_baseline(baseline) if baseline is not None else None
    prometheus = prometheus or test.spec.metrics.prometheus_url
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    out = out or Path("plimsoll-out") / f"{test.metadata.name}-{stamp}"
    cgroup_root = os.environ.get("PLIMSOLL_CGROUP_ROOT")
    _stop_on_terminate_and_hangup()
    try:
        cgroups = Path(cgroup_root) if cgroup_root else None
        report = asyncio.run(_run(test, out, quiet, cgroups, listen, prometheus, scrape_wait))
    except (RunSetupError, leftovers.LeftoversError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(EXIT_INCOMPLETE) from exc
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            typer.echo(f"interrupted: partial report in {out / 'report.json'}", err=True)
        raise typer.Exit(EXIT_INCOMPLETE) from None
    written = write_report(report, out)
    for line in report.summary:
        typer.echo(line)
    if report.comparison is not None:
        typer.echo(report.comparison.headline)
    if report.message:
        typer.echo(report.message, err=True)
    typer.echo(f"report: {written[1]} (and report.json, charts) in {out}")
    regressed = _against_baseline(old, report, threshold) if old is not None else False
    if report.outcome is not Outcome.SUCCEEDED:
        raise typer.Exit(EXIT_INCOMPLETE)
    if report.proof is not None and not report.proof.held:
        raise typer.Exit(EXIT_NOT_PROVED)
    raise typer.Exit(EXIT_REGRESSED if regressed else EXIT_OK)


def _read_baseline(path: Path) -> RunReport:
    """The earlier run, read before this one starts: a bad path fails in a second, not after
    the whole run."""
    try:
        return read_report(path)
    except (OSError, ValidationError) as exc:
        typer.echo(f"--baseline {path}: not a Plimsoll report.json: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc


def _against_baseline(old: RunReport, new: RunReport, threshold: float | None) -> bool:
    """Print how this run's ceilings stand against the baseline's; True on a regression."""
    try:
        runs = [LabelledRun("baseline", old), LabelledRun("this run", new)]
        comparisons = with_headlines(compare_runs(runs))
    except ValueError as exc:
        typer.echo(f"cannot compare with the baseline: {exc}", err=True)
        return threshold is not None  # a gate that cannot judge must not pass silently
    for comparison in comparisons:
        typer.echo(comparison.headline)
    failures = regression_gate(comparisons, threshold) if threshold is not None else []
    for line in failures:
        typer.echo(line, err=True)
    return bool(failures)
