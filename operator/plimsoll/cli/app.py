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

from plimsoll import DISTRIBUTION
from plimsoll.api.crd import render_crd
from plimsoll.api.resource import SpecError
from plimsoll.cli.calibrate import calibrate
from plimsoll.cli.compare import COMPARE_EPILOG, compare_cmd
from plimsoll.cli.exits import EXIT_INCOMPLETE, EXIT_INVALID_SPEC, EXIT_OK
from plimsoll.cli.help_text import epilog
from plimsoll.cli.init import init
from plimsoll.cli.operator import operator_cmd
from plimsoll.cli.report import report
from plimsoll.cli.run import RUN_EPILOG, run
from plimsoll.cli.safe_yaml import load_documents
from plimsoll.cli.size import size
from plimsoll.cli.spec_file import read_spec_file
from plimsoll.decide.bar_advice import bar_warnings
from plimsoll.decide.pod_template_policy import TemplatePolicy
from plimsoll.decide.run_limits import RunLimits
from plimsoll.decide.target_policy import external_targets_from
from plimsoll.decide.workload_advice import workload_warnings
from plimsoll.kube.run_policy import ClusterPolicy, policy_problems
from plimsoll.platforms.local.pieces import not_runnable_here

app = typer.Typer(
    name="plimsoll",
    help="Find the capacity ceiling of a service pinned to a pod shape.",
    epilog=epilog(
        "plimsoll run examples/quickstart.yaml",
        "plimsoll validate examples/*.yaml",
        "plimsoll compare v1/report.json v2/report.json --fail-on-regression 10%",
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: it wraps at 80 columns, rich's cuts flags
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"plimsoll {package_version(DISTRIBUTION)}")
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


@app.command(
    epilog=epilog("plimsoll crd > crds/capacitytest.yaml", "plimsoll crd | kubectl apply -f -")
)
def crd() -> None:
    """Print the CapacityTest CRD (generated from the API models)."""
    sys.stdout.write(render_crd())


@app.command(
    epilog=epilog(
        "plimsoll validate examples/quickstart.yaml",
        "plimsoll validate examples/*.yaml",
    )
)
def validate(
    files: Annotated[list[Path], typer.Argument(help="CapacityTest YAML files.")],
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Check for `plimsoll run` on this machine: the cluster's policy does not "
            "apply, and the target must be one this machine can start (a command).",
        ),
    ] = False,
    cluster_policy: Annotated[
        Path | None,
        typer.Option(
            help="The chart's values (a YAML file): its limits, prometheus.url and "
            ".allowedUrls, allowedTargetHosts, podTemplate; without it, the chart's defaults."
        ),
    ] = None,
) -> None:
    """Check CapacityTest files, naming each mistake's field.

    Unless `--local`, the cluster's policy (the admin's limits, the Prometheus servers
    and PromQL scoping, `target.url` as written) is applied as the operator applies it
    (`plimsoll.kube.run_policy`), so "valid" means the operator accepts it too.
    Exit 0 when every file is valid, 2 when any spec is invalid, 1 on an internal error
    (as `plimsoll run`); every file is checked, whatever the ones before it held."""
    policy = None if local else _cluster_policy(cluster_policy)
    invalid = broken = False
    for path in files:
        try:
            invalid |= not _validate_one(path, policy)
        except Exception as exc:  # a bug of ours: say so, and go on with the next file
            broken = True
            typer.echo(f"{path}: could not be checked: {type(exc).__name__}: {exc}", err=True)
    raise typer.Exit(EXIT_INCOMPLETE if broken else EXIT_INVALID_SPEC if invalid else EXIT_OK)


def _cluster_policy(path: Path | None) -> ClusterPolicy:
    """The chart's values that make the policy (`limits`, `prometheus.url` and
    `.allowedUrls`, `allowedTargetHosts`, `externalTargets`, `podTemplate`), from a values file; the
    defaults without."""
    if path is None:
        return ClusterPolicy()
    try:
        documents = load_documents(path, path.read_text(encoding="utf-8"))
        values = documents[0] if documents else {}
        if not isinstance(values, dict):
            raise ValueError("expected the chart's values: a mapping")
        prometheus = values.get("prometheus") or {}
        urls = [prometheus.get("url") or "", *(prometheus.get("allowedUrls") or [])]
        return ClusterPolicy(
            limits=RunLimits.from_values(values.get("limits") or {}),
            prometheus_urls=frozenset(u for u in urls if u),
            allowed_target_hosts=frozenset(values.get("allowedTargetHosts") or []),
            external_targets=external_targets_from(",".join(values.get("externalTargets") or [])),
            pod_template=TemplatePolicy.from_values(values.get("podTemplate") or {}),
        )
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise typer.BadParameter(f"--cluster-policy {path}: {exc}") from exc


def _validate_one(path: Path, policy: ClusterPolicy | None = None) -> bool:
    """Print what `path` holds; True when it is valid (by the cluster's `policy` too,
    when given)."""
    try:
        read = read_spec_file(path)
        if policy is not None:
            over = [
                f"{t.metadata.name}: {p}" for t in read.tests for p in policy_problems(t, policy)
            ]
        else:  # for `plimsoll run`: what this machine cannot start
            over = [
                f"{t.metadata.name} ({name}): {problem}"
                for t in read.tests
                for name, view in t.spec.variant_specs().items()
                if (problem := not_runnable_here(view)) is not None
            ]
        if over:
            raise SpecError(over)
    except SpecError as exc:
        typer.echo(f"{path}: invalid", err=True)
        for line in exc.problems:
            typer.echo(f"  {line}", err=True)
        return False
    names = ", ".join(t.metadata.name for t in read.tests)
    typer.echo(f"{path}: valid ({names})")
    for note in read.skipped:
        typer.echo(f"  {note}", err=True)
    for test in read.tests:
        for warning in [*workload_warnings(test.spec.workload), *bar_warnings(test.spec.pass_when)]:
            typer.echo(f"  warning ({test.metadata.name}): {warning}", err=True)
    return True


app.command(
    epilog=epilog(
        "plimsoll init --url http://127.0.0.1:8080/ -o capacitytest.yaml",
        "plimsoll init --command 'python app.py' --port-env PORT --cpu 500m",
    )
)(init)
app.command(
    epilog=epilog(
        "plimsoll size --report out/report.json --peak 20000 --growth 2 --zones 3",
        "plimsoll size --per-pod 300 --unit users --peak 5000 --json",
    )
)(size)
app.command(epilog=RUN_EPILOG)(run)
app.command(
    epilog=epilog(
        "plimsoll report plimsoll-out/quickstart-20261206-120000/report.json",
        "plimsoll report old/report.json --out redrawn/",
    )
)(report)
app.command("compare", epilog=COMPARE_EPILOG)(compare_cmd)
app.command(
    epilog=epilog(
        "plimsoll calibrate access.json --client xff -o fitted.yaml",
        "plimsoll calibrate access.log.gz --format combined --route '/api/items/{id}'",
    )
)(calibrate)
app.command(
    "operator",
    epilog=epilog(
        "plimsoll operator",
        "plimsoll operator -n team-a -n team-b --max-concurrent 2",
        "plimsoll operator --peering plimsoll --peering-lifetime 45s",
    ),
)(operator_cmd)


def main() -> None:
    app()
