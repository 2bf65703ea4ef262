"""`plimsoll operator`: run the kopf operator against the cluster of the current kubeconfig.

Registered in `plimsoll.cli.app`. Cluster-wide by default (`-A`); `--namespace`
(repeatable) narrows it. Outside a cluster (a laptop with a kubeconfig) the
runner reaches the generators through the API server's pod proxy; inside, by
pod IP (`--reach` overrides). The Helm chart passes the images, Prometheus URL
and metrics port through the PLIMSOLL_* environment variables it sets.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Annotated

import typer

from plimsoll.controller.supervisor import OperatorContext
from plimsoll.kube.control_ingress import ControlClients
from plimsoll.kube.grants import GrantError, OperatorIdentity
from plimsoll.kube.names import Images
from plimsoll.platforms.kubernetes.platform import (
    REACH_AUTO,
    REACH_POD_IP,
    REACH_PROXY,
    KubernetesOptions,
)


def build_context(
    *,
    reach: str,
    max_concurrent: int,
    metrics_port: int,
    prometheus_url: str | None,
    metrics_host: str = "0.0.0.0",
) -> OperatorContext:
    if reach not in (REACH_AUTO, REACH_POD_IP, REACH_PROXY):
        raise typer.BadParameter(f"--reach must be {REACH_AUTO}, {REACH_POD_IP} or {REACH_PROXY}")
    allowed = os.environ.get("PLIMSOLL_ALLOWED_PROMETHEUS_URLS", "")
    options = KubernetesOptions(
        images=Images.from_env(),
        reach=reach,
        prometheus_url=prometheus_url or None,
        # Beyond the default, the only Prometheus servers a CapacityTest may name.
        allowed_prometheus=frozenset(u.strip() for u in allowed.split(",") if u.strip()),
        identity=_identity(),
        control_clients=_control_clients(),
    )
    return OperatorContext(
        options=options,
        max_concurrent=max_concurrent,
        metrics_port=metrics_port,
        metrics_host=metrics_host,
    )


def _control_clients() -> ControlClients:
    try:
        return ControlClients.from_env()
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def _identity() -> OperatorIdentity | None:
    try:
        return OperatorIdentity.from_env()
    except GrantError as exc:
        raise typer.BadParameter(str(exc)) from exc


async def run_operator(
    ctx: OperatorContext,
    *,
    namespaces: list[str],
    liveness: str | None,
    stop_flag: asyncio.Event | None = None,
    ready_flag: asyncio.Event | None = None,
) -> None:
    """The operator as a coroutine, for the CLI and for in-process tests."""
    import kopf

    from plimsoll.controller.handlers import registry

    await kopf.operator(
        registry=registry,
        clusterwide=not namespaces,
        namespaces=namespaces,
        standalone=True,  # one replica (the chart's Deployment uses Recreate)
        liveness_endpoint=liveness,
        memo=kopf.Memo(plimsoll=ctx),
        stop_flag=stop_flag,
        ready_flag=ready_flag,
    )


def operator_cmd(
    all_namespaces: Annotated[
        bool, typer.Option("--all-namespaces", "-A", help="Watch every namespace (the default).")
    ] = False,
    namespace: Annotated[
        list[str] | None, typer.Option("--namespace", "-n", help="Watch only these namespaces.")
    ] = None,
    liveness: Annotated[
        str | None, typer.Option(help="kopf's health endpoint, e.g. http://0.0.0.0:8080/healthz.")
    ] = None,
    reach: Annotated[
        str, typer.Option(help="How to reach generators: auto, pod-ip or proxy.")
    ] = REACH_AUTO,
    max_concurrent: Annotated[
        int, typer.Option(help="Runs at once; others wait in phase Queued (0: no limit).")
    ] = int(os.environ.get("PLIMSOLL_MAX_CONCURRENT", "0")),
    metrics_port: Annotated[
        int, typer.Option(help="Port of the operator's /metrics (0: off).")
    ] = int(os.environ.get("PLIMSOLL_METRICS_PORT", "0")),
    metrics_host: Annotated[
        str, typer.Option(help="Address of the operator's /metrics (all interfaces by default).")
    ] = os.environ.get("PLIMSOLL_METRICS_HOST", "0.0.0.0"),
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Run the operator: watch CapacityTests and run each in its own namespace."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if all_namespaces and namespace:
        raise typer.BadParameter("give either --all-namespaces or --namespace, not both")
    ctx = build_context(
        reach=reach,
        max_concurrent=max_concurrent,
        metrics_port=metrics_port,
        metrics_host=metrics_host,
        prometheus_url=os.environ.get("PLIMSOLL_PROMETHEUS_URL"),
    )
    asyncio.run(run_operator(ctx, namespaces=list(namespace or []), liveness=liveness))
