"""How the runner reaches a started run: the target (a pod, the replicas' Service, or
an existing service), the mock, the generators, where each pod landed, and what the
user should know about that placement. Pure: the pods are passed in as the API server
returned them."""

from __future__ import annotations

from typing import Any

from plimsoll.api.autoscale import DEFAULT_SYNC_PERIOD
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.urls import redact_url
from plimsoll.decide.target_policy import refused_networks
from plimsoll.kube import manifests, names, network_policies
from plimsoll.kube.control_ingress import OPEN_CONTROL_WARNING
from plimsoll.kube.names import RunIdentity
from plimsoll.platforms.base import Endpoints, FaultInjector


def host_literal(ip: str) -> str:
    """An IP as a URL's host: IPv6 in brackets."""
    return f"[{ip}]" if ":" in ip else ip


def run_endpoints(
    spec: CapacityTestSpec,
    run: RunIdentity,
    targets: list[dict[str, Any]],
    mock: dict[str, Any],
    generators: dict[str, dict[str, Any]],
    generator_urls: list[str],
    *,
    open_control: bool,
    api_hosts: set[str],
    allowed_target_hosts: frozenset[str],
    faults: FaultInjector | None,
) -> Endpoints:
    """The pods as the API server returned them: every target replica's ([] for an
    existing service), the default mock's first, the generators' by name."""
    target_nodes = {t.get("spec", {}).get("nodeName") for t in targets} - {None}
    placement, warnings = [], []
    if open_control:
        warnings.append(OPEN_CONTROL_WARNING)
    if spec.target.teardown:
        warnings.append(
            "target.teardown runs on the local platform only: here the run's namespace, "
            "with its services and what the setup put in them, is deleted at cleanup"
        )
    autoscaler = spec.target.autoscaler
    if autoscaler is not None and autoscaler.sync_period != DEFAULT_SYNC_PERIOD:
        warnings.append(
            f"target.autoscaler.syncPeriod ({autoscaler.sync_period:g} s) is a flag of the "
            "cluster's kube-controller-manager, not of the HPA: the cluster's own period "
            "applies to this flight"
        )
    if not targets:
        placement.append(
            f"target: existing service at {redact_url(spec.target.url or '')} (not started)"
        )
        warning = network_policies.external_target_warning(spec)
        if warning is not None:
            warnings.append(warning)
    for pod in [*targets, mock, *generators.values()]:
        node = pod.get("spec", {}).get("nodeName") or "unknown node"
        zone = pod["metadata"].get("labels", {}).get(names.LABEL_ZONE)
        in_zone = f", zone {zone}" if zone else ""
        placement.append(f"{pod['metadata']['name']} on {node} ({pod['status']['podIP']}{in_zone})")
        if pod not in targets and pod.get("spec", {}).get("nodeName") in target_nodes:
            node = pod["spec"]["nodeName"]
            warnings.append(f"{pod['metadata']['name']} shares node {node} with the target")
    mock_ip = host_literal(mock["status"]["podIP"])
    floor = names.floor_port(spec.upstream.port, spec.upstream.image)
    return Endpoints(
        target_url=_target_url(spec, run, targets),
        upstream_url=f"http://{mock_ip}:{spec.upstream.port}",
        floor_url=f"http://{mock_ip}:{floor}/floor" if floor else None,
        generator_urls=generator_urls,
        placement=placement,
        warnings=warnings,
        refused_target_networks=refused_networks(spec.target.url, api_hosts, allowed_target_hosts),
        faults=faults if targets else None,
    )


def _target_url(spec: CapacityTestSpec, run: RunIdentity, targets: list[dict[str, Any]]) -> str:
    if len(targets) > 1 or (targets and spec.target.autoscaler is not None):
        # Through the Service, as the deployment's clients reach it: the cluster's DNS
        # names its address and kube-proxy picks a ready replica for each connection, so
        # traffic follows the EndpointSlices around a replica a fault took away, and to
        # the replicas a flight's HPA adds.
        service = manifests.service_host(run, run.child(names.TARGET_SERVICE))
        return f"http://{service}:{spec.target.port}"
    if targets:
        return f"http://{host_literal(targets[0]['status']['podIP'])}:{spec.target.port}"
    return str(spec.target.url).rstrip("/")
