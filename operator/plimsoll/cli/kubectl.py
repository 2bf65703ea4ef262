"""`kubectl plimsoll ...`: a kubectl plugin over the CapacityTests in a cluster.

Installed with the package as the `kubectl-plimsoll` command, which kubectl finds
on the PATH as krew-installed plugins are found. It logs in
from the kubeconfig as kubectl does (`--kubeconfig`, `KUBECONFIG`, `--context`) and
talks to the API server through `plimsoll.kube.client`, like the operator:

- `report NAME` renders the report ConfigMap's Markdown in the terminal (rich);
  `--charts DIR` also draws its charts there from report.json;
- `rerun NAME` sets the `plimsoll.dev/rerun` annotation, so the operator runs it again;
- `compare A B` compares two CapacityTests' latest reports (as `plimsoll compare`),
  with the changepoints the gate found in each one's history;
- `logs NAME` prints the current step's generator and target logs.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from kubernetes import config as kubeconfig
from kubernetes.client import Configuration
from pydantic import ValidationError
from rich.console import Console
from rich.markdown import Markdown

from plimsoll.api.report import RunReport
from plimsoll.cli.exits import EXIT_INVALID_SPEC
from plimsoll.decide.across_runs import LabelledRun, compare_runs
from plimsoll.decide.operator_action import RERUN_ANNOTATION
from plimsoll.kube import names
from plimsoll.kube.client import CAPACITY_TESTS, CONFIG_MAPS, PODS, KubeClient, KubeError

app = typer.Typer(
    help="Plimsoll's CapacityTests from kubectl: reports, reruns, comparisons, logs.",
    no_args_is_help=True,
    add_completion=False,
)
T = TypeVar("T")

Namespace = Annotated[str, typer.Option("--namespace", "-n", help="The CapacityTest's namespace.")]
Kubeconfig = Annotated[
    str | None, typer.Option("--kubeconfig", help="The kubeconfig (default: $KUBECONFIG).")
]
Context = Annotated[str | None, typer.Option(help="The kubeconfig context to use.")]


def _connect(kubeconfig_path: str | None, context: str | None) -> KubeClient:
    config = Configuration()
    try:
        kubeconfig.load_kube_config(  # type: ignore[no-untyped-call]  # the client's, untyped
            config_file=kubeconfig_path, context=context, client_configuration=config
        )
    except (kubeconfig.ConfigException, OSError) as exc:
        typer.echo(f"cannot read the kubeconfig: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    config.retries = False  # plimsoll.kube.retry retries, bounded
    return KubeClient(config)


def _run(
    kubeconfig_path: str | None, context: str | None, work: Callable[[KubeClient], Awaitable[T]]
) -> T:
    async def main() -> T:
        client = _connect(kubeconfig_path, context)
        try:
            return await work(client)
        except KubeError as exc:
            typer.echo(exc.message, err=True)
            raise typer.Exit(1) from exc
        finally:
            await client.aclose()

    return asyncio.run(main())


async def _report_of(client: KubeClient, namespace: str, name: str) -> tuple[RunReport, str]:
    """The latest report of CapacityTest `name`: its ConfigMap's report.json and .md."""
    found = await client.get(CONFIG_MAPS, namespace, f"{name}-report"[:253])
    if found is None:
        typer.echo(
            f"no report for {namespace}/{name} yet (ConfigMap {name}-report): the operator "
            "writes it when a run ends; see kubectl get capacitytest -n "
            f"{namespace} {name}",
            err=True,
        )
        raise typer.Exit(1)
    data = found.get("data") or {}
    try:
        report = RunReport.model_validate_json(data.get("report.json", ""))
    except ValidationError as exc:
        typer.echo(f"ConfigMap {namespace}/{name}-report holds no Plimsoll report.json", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    return report, str(data.get("report.md", ""))


@app.command()
def report(
    name: Annotated[str, typer.Argument(help="The CapacityTest.")],
    namespace: Namespace = "default",
    charts: Annotated[
        Path | None, typer.Option(help="Also draw the report's charts (PNG, SVG) here.")
    ] = None,
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Show the latest report of a CapacityTest, rendered for the terminal."""
    found, markdown = _run(kubeconfig_path, context, lambda c: _report_of(c, namespace, name))
    Console().print(Markdown(markdown))
    if charts is not None:
        from plimsoll.report.charts import draw_charts  # matplotlib: only when asked

        charts.mkdir(parents=True, exist_ok=True)
        for file_name in draw_charts(found, charts):
            typer.echo(f"chart: {charts / file_name}")


@app.command()
def rerun(
    name: Annotated[str, typer.Argument(help="The CapacityTest.")],
    namespace: Namespace = "default",
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Ask the operator to run a CapacityTest again (the plimsoll.dev/rerun annotation)."""
    token = uuid.uuid4().hex[:12]

    async def mark(client: KubeClient) -> None:
        body = {"metadata": {"annotations": {RERUN_ANNOTATION: token}}}
        await client.patch(CAPACITY_TESTS, namespace, name, body)

    _run(kubeconfig_path, context, mark)
    typer.echo(f"capacitytest {namespace}/{name}: rerun requested ({RERUN_ANNOTATION}={token})")


@app.command()
def compare(
    first: Annotated[str, typer.Argument(help="The baseline CapacityTest.")],
    second: Annotated[str, typer.Argument(help="The CapacityTest compared with it.")],
    namespace: Namespace = "default",
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Compare the ceilings of two CapacityTests' latest reports, the first the baseline."""
    from plimsoll.cli.compare import _section, changepoint_sections, with_headlines

    async def both(client: KubeClient) -> list[RunReport]:
        return [(await _report_of(client, namespace, n))[0] for n in (first, second)]

    reports = _run(kubeconfig_path, context, both)
    runs = [
        LabelledRun(n, r, f"{namespace}/{n}") for n, r in zip((first, second), reports, strict=True)
    ]
    try:
        comparisons = with_headlines(compare_runs(runs, first))
    except ValueError as exc:
        typer.echo(f"cannot compare: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    sections = [_section(c, len(comparisons) > 1) for c in comparisons]
    markdown = "\n".join([*sections, *changepoint_sections(runs)])
    Console().print(Markdown(markdown))


@app.command()
def logs(
    name: Annotated[str, typer.Argument(help="The CapacityTest.")],
    namespace: Namespace = "default",
    tail: Annotated[int, typer.Option(help="Lines from the end of each log.")] = 50,
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """The current step's generator and target logs (the run namespace's pods)."""

    async def gather(client: KubeClient) -> list[tuple[str, str]]:
        test = await client.get(CAPACITY_TESTS, namespace, name)
        if test is None:
            typer.echo(f"no CapacityTest {namespace}/{name}", err=True)
            raise typer.Exit(1)
        run_namespace = (test.get("status") or {}).get("namespace")
        if not run_namespace:
            typer.echo(f"{namespace}/{name} has no run namespace yet (status.namespace)", err=True)
            raise typer.Exit(1)
        pods = await client.list(PODS, run_namespace)
        wanted = [
            p["metadata"]["name"]
            for p in pods
            if (p["metadata"].get("labels") or {}).get(names.LABEL_ROLE)
            in (names.ROLE_GENERATOR, names.ROLE_TARGET)
        ]
        return [(pod, await client.logs(run_namespace, pod, tail=tail)) for pod in sorted(wanted)]

    for pod, text in _run(kubeconfig_path, context, gather):
        typer.echo(f"==> {pod} <==")
        typer.echo(text.rstrip("\n"))


def main() -> None:
    app()
