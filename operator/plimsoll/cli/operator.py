"""`plimsoll operator`: run the kopf operator against the cluster of the current kubeconfig.

Registered in `plimsoll.cli.app`. Cluster-wide by default (`-A`); `--namespace`
(repeatable) narrows it. Outside a cluster (a laptop with a kubeconfig) the
runner reaches the generators through the API server's pod proxy; inside, by
pod IP (`--reach` overrides). The Helm chart passes the images, Prometheus URL
and metrics port through the PLIMSOLL_* environment variables it sets.

Replicas: with `--peering NAME` (the chart sets PLIMSOLL_PEERING) the operator
joins kopf's peering object NAME (a ClusterKopfPeering, or a KopfPeering in each
watched namespace) and only the senior live replica works; the others stand by,
paused, and the next in seniority takes over (resuming the runs from their
status) once the active one's keep-alive is `--peering-lifetime` seconds old.
Without it the operator runs standalone: run one replica only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import typer

from plimsoll.cli.durations import METAVAR, whole_seconds
from plimsoll.cli.exits import EXIT_INCOMPLETE
from plimsoll.controller.context import OperatorContext
from plimsoll.controller.peering import PeeringMissingError, require_peering_objects
from plimsoll.decide.peering import seniority_priority
from plimsoll.decide.pod_template_policy import TemplatePolicy
from plimsoll.decide.run_limits import RunLimits
from plimsoll.decide.target_policy import external_targets_from
from plimsoll.kube.control_ingress import ControlClients
from plimsoll.kube.grants import GrantError, OperatorIdentity
from plimsoll.kube.names import Images
from plimsoll.platforms.kubernetes.options import (
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
    target_hosts = os.environ.get("PLIMSOLL_ALLOWED_TARGET_HOSTS", "")
    limits = _limits()
    options = KubernetesOptions(
        images=Images.from_env(),
        reach=reach,
        prometheus_url=prometheus_url or None,
        # Beyond the default, the only Prometheus servers a CapacityTest may name.
        allowed_prometheus=frozenset(u.strip() for u in allowed.split(",") if u.strip()),
        # target.url hosts the admin allows although they are link-local, loopback or
        # the API server (decide/target_policy.py).
        allowed_target_hosts=frozenset(h.strip() for h in target_hosts.split(",") if h.strip()),
        external_targets=_external_targets(),
        identity=_identity(),
        control_clients=_control_clients(),
        limits=limits,
    )
    return OperatorContext(
        options=options,
        max_concurrent=max_concurrent,
        metrics_port=metrics_port,
        metrics_host=metrics_host,
        limits=limits,
        template_policy=_template_policy(),
    )


T = TypeVar("T")


def _chart_values(variable: str, what: str, parse: Callable[[dict[str, Any]], T]) -> T:
    """A chart value the deployment passes as JSON in the environment `variable` (a mapping
    of `what`), parsed by `parse`; unset, `parse({})`: the safe defaults. A value that is
    not such a mapping, or that `parse` refuses, stops start-up naming the variable."""
    text = os.environ.get(variable, "").strip()
    try:
        values = json.loads(text) if text else {}
        if not isinstance(values, dict):
            raise ValueError(f"not a JSON object of {what}")
        return parse(values)
    except ValueError as exc:
        raise typer.BadParameter(f"{variable}: {exc}") from exc


def _external_targets() -> frozenset[str]:
    """Where a target.url may point on this cluster: the chart's `externalTargets`."""
    try:
        return external_targets_from(os.environ.get("PLIMSOLL_EXTERNAL_TARGETS", ""))
    except ValueError as exc:
        raise typer.BadParameter(f"PLIMSOLL_EXTERNAL_TARGETS: {exc}") from exc


def _limits() -> RunLimits:
    """The admin's limits: the chart's `limits` (`plimsoll.decide.run_limits.RunLimits`)."""
    return _chart_values("PLIMSOLL_LIMITS", "limits", RunLimits.from_values)


def _template_policy() -> TemplatePolicy:
    """What a podTemplate may place and label: the chart's `podTemplate`; unset, nothing
    beyond the well-known node classes (`plimsoll.decide.pod_template_policy`)."""
    return _chart_values(
        "PLIMSOLL_POD_TEMPLATE_POLICY", "podTemplate settings", TemplatePolicy.from_values
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


@dataclass(frozen=True)
class Peering:
    """kopf's peering object this replica joins, and how soon a silent peer counts as dead."""

    name: str
    lifetime: int = 30  # seconds: also how long a standby waits before it takes over

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise typer.BadParameter("--peering needs the peering object's name")
        if not 3 <= self.lifetime <= 3600:
            raise typer.BadParameter(
                f"--peering-lifetime {self.lifetime}: give 3 to 3600 seconds (the keep-alive "
                "is sent a few seconds before it runs out; the standby waits this long)"
            )


async def run_operator(
    ctx: OperatorContext,
    *,
    namespaces: list[str],
    liveness: str | None,
    peering: Peering | None = None,
    stop_flag: asyncio.Event | None = None,
    ready_flag: asyncio.Event | None = None,
) -> None:
    """The operator as a coroutine, for the CLI and for in-process tests."""
    import kopf

    from plimsoll.controller.handlers import registry

    settings = kopf.OperatorSettings()
    if peering is not None:
        await require_peering_objects(peering.name, namespaces, settings)
        settings.peering.lifetime = peering.lifetime
    await kopf.operator(
        registry=registry,
        settings=settings,
        clusterwide=not namespaces,
        namespaces=namespaces,
        # A named peering is mandatory: kopf stays paused until the peering object
        # exists and says no senior peer is alive, so two replicas never both run.
        standalone=peering is None,
        peering_name=peering.name if peering is not None else None,
        priority=seniority_priority(time.time(), random.randrange(100)) if peering else None,
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
        int,
        typer.Option(
            help="Runs at once, every namespace together; others wait in phase Queued "
            "(0: no limit)."
        ),
    ] = int(os.environ.get("PLIMSOLL_MAX_CONCURRENT", "8")),
    metrics_port: Annotated[
        int, typer.Option(help="Port of the operator's /metrics (0: off).")
    ] = int(os.environ.get("PLIMSOLL_METRICS_PORT", "0")),
    metrics_host: Annotated[
        str, typer.Option(help="Address of the operator's /metrics (all interfaces by default).")
    ] = os.environ.get("PLIMSOLL_METRICS_HOST", "0.0.0.0"),
    peering: Annotated[
        str | None,
        typer.Option(
            help="Join kopf's peering object of this name: one replica works, the others "
            "stand by (needs the chart's peering CRDs and object). Unset: standalone."
        ),
    ] = os.environ.get("PLIMSOLL_PEERING") or None,
    peering_lifetime: Annotated[
        int,
        typer.Option(
            parser=whole_seconds,
            metavar=METAVAR,
            show_default=False,
            help="How long after its last keep-alive a replica counts as dead and a standby "
            "takes over (default: 30s).",
        ),
    ] = int(os.environ.get("PLIMSOLL_PEERING_LIFETIME", "30")),
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    """Run the operator: each CapacityTest in its own namespace.

    Watches CapacityTests in the current kubeconfig's cluster and runs each one."""
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
    peers = Peering(peering, peering_lifetime) if peering is not None else None
    try:
        asyncio.run(
            run_operator(ctx, namespaces=list(namespace or []), liveness=liveness, peering=peers)
        )
    except PeeringMissingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_INCOMPLETE) from None
