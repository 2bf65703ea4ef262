"""`kubectl plimsoll ...`: a kubectl plugin over the CapacityTests in a cluster.

Installed with the package as the `kubectl-plimsoll` command, which kubectl finds
on the PATH as krew-installed plugins are found. It logs in
from the kubeconfig as kubectl does (`--kubeconfig`, `KUBECONFIG`, `--context`) and
talks to the API server through `plimsoll.kube.client`, like the operator:

- `report NAME` renders the report ConfigMap's Markdown in the terminal (rich);
  `--charts DIR` also draws its charts there from report.json, and `--html FILE`
  writes the interactive report.html from it (the operator image has no plotly, so
  the page is drawn here, on the reader's side);
- `rerun NAME` sets the `plimsoll.dev/rerun` annotation, so the operator runs it again;
- `compare A B` compares two CapacityTests' latest reports (as `plimsoll compare`),
  with the changepoints the gate found in each one's history;
- `logs NAME` prints the current step's generator and target logs;
- `wait NAME` waits until the run ends and exits with its answer, with `plimsoll run`'s
  codes (0 within the bar, 99 refused, 1 could not complete), for pipelines.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markdown import Markdown

from plimsoll.api.report import RunReport
from plimsoll.api.status import CapacityTestStatus
from plimsoll.cli.durations import METAVAR, positive_duration
from plimsoll.cli.exits import EXIT_INCOMPLETE, EXIT_INVALID_SPEC, exit_code
from plimsoll.cli.help_text import epilog
from plimsoll.decide.across_runs import LabelledRun, compare_runs
from plimsoll.decide.operator_action import RERUN_ANNOTATION
from plimsoll.decide.pipeline_gate import run_ended, status_answer, status_cases
from plimsoll.kube import names
from plimsoll.kube.client import CAPACITY_TESTS, CONFIG_MAPS, PODS, KubeClient, KubeError
from plimsoll.kube.kubeconfig import KubeconfigError, client_from_kubeconfig

app = typer.Typer(
    help="Plimsoll's CapacityTests from kubectl: reports, reruns, comparisons, logs.",
    epilog=epilog(
        "kubectl plimsoll report quickstart -n team-a",
        "kubectl plimsoll rerun quickstart && kubectl plimsoll wait quickstart",
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # click's plain help: it wraps at 80 columns, rich's cuts flags
)
_POLL_SECONDS = 2.0
T = TypeVar("T")

Namespace = Annotated[str, typer.Option("--namespace", "-n", help="The CapacityTest's namespace.")]
Kubeconfig = Annotated[
    str | None, typer.Option("--kubeconfig", help="The kubeconfig (default: $KUBECONFIG).")
]
Context = Annotated[str | None, typer.Option(help="The kubeconfig context to use.")]


def _connect(kubeconfig_path: str | None, context: str | None) -> KubeClient:
    try:
        return client_from_kubeconfig(kubeconfig_path, context)
    except KubeconfigError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc


def _run(
    kubeconfig_path: str | None, context: str | None, work: Callable[[KubeClient], Awaitable[T]]
) -> T:
    async def main() -> T:
        client = _connect(kubeconfig_path, context)
        try:
            return await work(client)
        except KubeError as exc:
            typer.echo(exc.message, err=True)
            raise typer.Exit(EXIT_INCOMPLETE) from exc
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


@app.command(
    epilog=epilog(
        "kubectl plimsoll report quickstart",
        "kubectl plimsoll report quickstart -n team-a --charts charts/",
    )
)
def report(
    name: Annotated[str, typer.Argument(help="The CapacityTest.")],
    namespace: Namespace = "default",
    charts: Annotated[
        Path | None, typer.Option(help="Also draw the report's charts (PNG, SVG) here.")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(help="Also write the report as one self-contained HTML page here."),
    ] = None,
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Show a CapacityTest's latest report in the terminal."""
    found, markdown = _run(kubeconfig_path, context, lambda c: _report_of(c, namespace, name))
    Console().print(Markdown(markdown))
    if html is not None:
        _write_html(found, html)
    if charts is not None:
        from plimsoll.report.charts import draw_charts  # matplotlib: only when asked

        charts.mkdir(parents=True, exist_ok=True)
        for file_name in draw_charts(found, charts):
            typer.echo(f"chart: {charts / file_name}")


def _write_html(found: RunReport, path: Path) -> None:
    from plimsoll.report.html import PlotlyMissingError, render_html  # plotly: only when asked

    try:
        page = render_html(found)
    except PlotlyMissingError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    typer.echo(f"html: {path}")


@app.command(
    epilog=epilog(
        "kubectl plimsoll rerun quickstart",
        "kubectl plimsoll rerun quickstart && kubectl plimsoll wait quickstart",
        "kubectl plimsoll rerun api-gate --image registry.example.com/api:2.7.0",
    )
)
def rerun(
    name: Annotated[str, typer.Argument(help="The CapacityTest.")],
    namespace: Namespace = "default",
    image: Annotated[
        str | None,
        typer.Option(
            help="Run it on this target image (spec.target.image): a canary's, in a "
            "pipeline. The spec changes, so its run is a new one.",
        ),
    ] = None,
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Run a CapacityTest again (the plimsoll.dev/rerun annotation), or on a new image."""
    token = uuid.uuid4().hex[:12]

    async def mark(client: KubeClient) -> None:
        body: dict[str, object] = {"metadata": {"annotations": {RERUN_ANNOTATION: token}}}
        if image is not None:
            found = await client.get(CAPACITY_TESTS, namespace, name)
            target = ((found or {}).get("spec") or {}).get("target") or {}
            if found is not None and "image" not in target:
                typer.echo(
                    f"capacitytest {namespace}/{name}: --image sets spec.target.image, and "
                    "this test's target has none (a command, a url or fromDeployment)",
                    err=True,
                )
                raise typer.Exit(EXIT_INVALID_SPEC)
            body["spec"] = {"target": {"image": image}}
        await client.patch(CAPACITY_TESTS, namespace, name, body)

    _run(kubeconfig_path, context, mark)
    on = f" on {image}" if image is not None else ""
    typer.echo(f"capacitytest {namespace}/{name}: rerun requested{on} ({RERUN_ANNOTATION}={token})")


@app.command(
    epilog=epilog(
        "kubectl plimsoll compare api-v1 api-v2",
        "kubectl plimsoll compare api-v1 api-v2 -n team-a --context prod",
    )
)
def compare(
    first: Annotated[str, typer.Argument(help="The baseline CapacityTest.")],
    second: Annotated[str, typer.Argument(help="The CapacityTest compared with it.")],
    namespace: Namespace = "default",
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Compare two CapacityTests' ceilings; the first is the baseline.

    From each one's latest report, as `plimsoll compare` does."""
    from plimsoll.cli.compare import _section, changepoint_sections, with_headlines

    async def both(client: KubeClient) -> list[RunReport]:
        return [(await _report_of(client, namespace, n))[0] for n in (first, second)]

    reports = _run(kubeconfig_path, context, both)
    runs = [
        LabelledRun(n, r, r.unit_costs, f"{namespace}/{n}")
        for n, r in zip((first, second), reports, strict=True)
    ]
    try:
        comparisons = with_headlines(compare_runs(runs, first))
    except ValueError as exc:
        typer.echo(f"cannot compare: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    sections = [_section(c, len(comparisons) > 1) for c in comparisons]
    by_name = dict(zip((first, second), reports, strict=True))
    markdown = "\n".join([*sections, *changepoint_sections(by_name)])
    Console().print(Markdown(markdown))


@app.command(
    epilog=epilog(
        "kubectl plimsoll logs quickstart",
        "kubectl plimsoll logs quickstart -n team-a --tail 200",
    )
)
def logs(
    name: Annotated[str, typer.Argument(help="The CapacityTest.")],
    namespace: Namespace = "default",
    tail: Annotated[int, typer.Option(help="Lines from the end of each log.")] = 50,
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Print the current step's generator and target logs.

    The run namespace's generator and target pods, the last --tail lines of each."""

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


@app.command(
    epilog=epilog(
        "kubectl plimsoll wait quickstart",
        "kubectl plimsoll wait quickstart -n team-a --timeout 45m --fail-below 300",
        "kubectl apply -f test.yaml && kubectl plimsoll wait quickstart",
        exit_codes=True,
    )
)
def wait(
    name: Annotated[str, typer.Argument(help="The CapacityTest.")],
    namespace: Namespace = "default",
    timeout: Annotated[
        float,
        typer.Option(
            parser=positive_duration,
            metavar=METAVAR,
            show_default=False,
            help="Give up (exit 1) when the run has not ended by then, e.g. 30m (default: 1h).",
        ),
    ] = 3600.0,
    fail_below: Annotated[
        int | None,
        typer.Option(min=1, help="Exit 99 when a variant's ceiling is below this level."),
    ] = None,
    kubeconfig_path: Kubeconfig = None,
    context: Context = None,
) -> None:
    """Wait for a CapacityTest's run to end; exit with its answer.

    The run the resource now asks for: a status left from before an edit or a rerun
    does not count. Prints the status's sentence and each case that says no."""

    async def watch(client: KubeClient) -> CapacityTestStatus | None:
        deadline = time.monotonic() + timeout
        while True:
            found = await client.get(CAPACITY_TESTS, namespace, name)
            if found is None:
                typer.echo(f"no CapacityTest {namespace}/{name}", err=True)
                raise typer.Exit(EXIT_INVALID_SPEC)
            try:
                status = CapacityTestStatus.model_validate(found.get("status") or {})
            except ValidationError as exc:  # an operator of another version, or a hand edit
                typer.echo(f"capacitytest {namespace}/{name}: unreadable status: {exc}", err=True)
                raise typer.Exit(EXIT_INCOMPLETE) from exc
            if run_ended(found.get("metadata") or {}, status):
                return status
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(min(_POLL_SECONDS, max(0.0, deadline - time.monotonic())))

    status = _run(kubeconfig_path, context, watch)
    if status is None:
        typer.echo(f"capacitytest {namespace}/{name}: no answer within the timeout", err=True)
        raise typer.Exit(EXIT_INCOMPLETE)
    typer.echo(f"capacitytest {namespace}/{name}: {status.phase.value}: {status.message}")
    cases = status_cases(status, fail_below)
    for case in cases:
        if case.passed is not True:
            verdict = "NO" if case.passed is False else "not judged"
            typer.echo(f"{verdict}: {case.name}: {case.message}", err=True)
    raise typer.Exit(exit_code(status_answer(status, cases)))


def main() -> None:
    app()
