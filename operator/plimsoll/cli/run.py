"""`plimsoll run FILE`: the whole capacity test on this machine, with the local platform.

Reads and validates the spec (exit 2 when invalid), serves the started
processes' figures under cAdvisor's names on `--exporter-listen` (printed at
start, so a Prometheus can scrape it), runs `plimsoll.run.runner` with a
`LocalPlatform` per variant and the console sink (reading the resources back
from `--prometheus` or `metrics.prometheusUrl` when given), then hands the report
to `plimsoll.cli.run_end`: report.json, report.md and the charts in `--out`, the
ceiling sentence and a steps table that fits the terminal, `--junit FILE`, and the
exit code (`plimsoll.cli.exits`: 0 within the bar, 99 answered but refused by
`--fail-below`, the regression gate of `--baseline OLD/report.json
--fail-on-regression 10%` or a proof, 1 could not complete; a run whose every
level passed answers "at least" and exits 0). Ctrl-C stops every process and still
writes the partial report. Before anything starts it checks that the
target can be pinned (`pinning_rights`): without the rights it re-executes itself in
a delegated systemd scope where the user's systemd offers one, and otherwise refuses
(exit 1) unless `--unpinned` is given, in which case every report says so first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from plimsoll.api.report import RunReport
from plimsoll.api.resource import CapacityTest, SpecError
from plimsoll.api.shapes import shape_name
from plimsoll.api.spec import Variant
from plimsoll.api.target import PodShape
from plimsoll.cli.compare import parse_threshold
from plimsoll.cli.durations import METAVAR, duration, positive_duration
from plimsoll.cli.exits import EXIT_INCOMPLETE, EXIT_INVALID_SPEC
from plimsoll.cli.help_text import epilog
from plimsoll.cli.run_end import Gates, finish
from plimsoll.cli.spec_file import read_capacity_tests
from plimsoll.cli.stop_signals import stop_on_signals
from plimsoll.decide.shape_search import grid
from plimsoll.metrics.exporter import CadvisorExporter
from plimsoll.platforms.local import leftovers, pinning_rights
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.files import read_report
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
    unpinned: bool,
) -> RunReport:
    run_id = f"{test.metadata.name}-{uuid.uuid4().hex[:6]}"
    task = asyncio.current_task()
    if task is not None:
        stop_on_signals(task)
    # A run killed outright (SIGKILL) could not stop what it started: reap that first.
    for line in leftovers.reap_orphans():
        typer.echo(f"earlier run: {line}", err=True)
    leftovers.register(run_id, cgroup_root)
    try:
        return await _run_registered(
            test, run_id, out, quiet, cgroup_root, listen, prometheus, scrape_wait, unpinned
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
    unpinned: bool,
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
            allow_unpinned=unpinned,
            exporter=exporter,
            prometheus_url=prometheus,
            scrape_wait=scrape_wait,
        )

    try:
        return await run_test(test, make_platform, sink)
    finally:
        await exporter.stop()


RUN_EPILOG = epilog(
    "plimsoll run examples/quickstart.yaml",
    "plimsoll run spec.yaml --trial-duration 20s --warm-up 2s --junit junit.xml",
    "plimsoll run spec.yaml --baseline old/report.json --fail-on-regression 10%",
    exit_codes=True,
)


class RunSetupError(RuntimeError):
    """The run could not begin (e.g. the exporter's address is taken)."""


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
            parser=duration,
            metavar=METAVAR,
            show_default=False,
            help="With Prometheus: how long to wait, at start, until it has scraped the "
            "exporter (default: 2m).",
        ),
    ] = 120.0,
    trial_duration: Annotated[
        float | None,
        typer.Option(
            parser=positive_duration,
            metavar=METAVAR,
            help="Override trial.duration, e.g. 20s, for short runs.",
        ),
    ] = None,
    warm_up: Annotated[
        float | None,
        typer.Option(
            parser=duration,
            metavar=METAVAR,
            help="Override trial.warmUp, e.g. 2s or 500ms, for short runs.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="Print only the result.")] = False,
    unpinned: Annotated[
        bool,
        typer.Option(
            help="Run even where the target cannot be pinned (no cgroup rights): it then runs "
            "without limits, and every report says so in its first line."
        ),
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(help="A report.json of an earlier run to compare the ceilings with."),
    ] = None,
    fail_on_regression: Annotated[
        str | None,
        typer.Option(
            help="With --baseline: exit 99 when a ceiling dropped by more than this (e.g. "
            "10%) and outside noise."
        ),
    ] = None,
    fail_below: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Exit 99 when a variant's ceiling is below this level (in the spec's unit).",
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            help="Also write the run's cases as JUnit XML here: one per variant's ceiling "
            "(against --fail-below and the regression gate), one per proof."
        ),
    ] = None,
) -> None:
    """Find a CapacityTest's ceiling on this machine.

    The target, the mock and the generators run as local processes, the target pinned
    with cgroups. The summary (the sentence, and a steps table that fits the terminal)
    goes to standard output; the full table is in report.md."""
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
    cgroups = _cgroup_root(test, file, unpinned)
    try:
        report = asyncio.run(
            _run(test, out, quiet, cgroups, listen, prometheus, scrape_wait, unpinned)
        )
    except (RunSetupError, leftovers.LeftoversError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(EXIT_INCOMPLETE) from exc
    except (KeyboardInterrupt, asyncio.CancelledError):  # stopped: cli/stop_signals.py
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            typer.echo(f"interrupted: partial report in {out / 'report.json'}", err=True)
        raise typer.Exit(EXIT_INCOMPLETE) from None
    gates = Gates(baseline=old, threshold=threshold, fail_below=fail_below, junit=junit)
    raise typer.Exit(finish(report, out, gates, quiet=quiet))


def _cgroup_root(test: CapacityTest, file: Path, unpinned: bool) -> Path | None:
    """The hierarchy to pin in (None: the mounted one), once the rights to pin the target
    are known to be there; refuses (exit 1) when they are not and `--unpinned` was not
    given. A user's own PLIMSOLL_CGROUP_ROOT is taken as given: it is never second-guessed
    by a delegated scope."""
    given = os.environ.get(pinning_rights.ROOT_ENV)
    root = Path(given) if given else None
    shape = test.spec.target.resources
    if shape is None or test.spec.target.url is not None or unpinned:
        return root  # nothing of ours to pin, or the user chose to run unpinned
    problem = pinning_rights.check(root)
    if problem is None:
        return root
    if root is None:
        delegated = pinning_rights.delegated_root()
        if delegated is not None and pinning_rights.check(delegated) is None:
            typer.echo(f"pinning in the delegated cgroup {delegated}", err=True)
            return delegated
        if pinning_rights.DELEGATED_ENV not in os.environ and pinning_rights.systemd_delegation():
            typer.echo(
                "no cgroup rights: running again in a systemd scope delegated to you", err=True
            )
            os.environ[pinning_rights.DELEGATED_ENV] = "1"
            again = [sys.executable, "-c", "from plimsoll.cli.app import main; main()"]
            argv = pinning_rights.delegation_argv([*again, *sys.argv[1:]])
            os.execvp(argv[0], argv)  # replaces this process: nothing has started yet
    command = f"plimsoll run {file}"
    typer.echo(pinning_rights.refusal(shape.cpu, shape.memory, problem, command), err=True)
    raise typer.Exit(EXIT_INCOMPLETE)


def _read_baseline(path: Path) -> RunReport:
    """The earlier run, read before this one starts: a bad path fails in a second, not after
    the whole run."""
    try:
        return read_report(path)
    except (OSError, ValidationError) as exc:
        typer.echo(f"--baseline {path}: not a Plimsoll report.json: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
