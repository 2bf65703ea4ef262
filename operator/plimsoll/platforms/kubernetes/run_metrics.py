"""Where a run's pods are measured from: the Prometheus that scrapes the kubelets'
cAdvisor, one selector per role (this variant's pods only, by their names), and the
restarts from the pods' own status."""

from __future__ import annotations

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import ResourceUsage
from plimsoll.api.upstream import mock_role
from plimsoll.kube import names
from plimsoll.kube.client import KubeClient
from plimsoll.kube.names import RunIdentity
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.promql import Selector
from plimsoll.metrics.source import (
    ROLE_GENERATOR,
    ROLE_MOCK,
    ROLE_TARGET,
    MetricsSource,
    Window,
    unreadable,
)
from plimsoll.platforms.kubernetes.options import KubernetesOptions
from plimsoll.platforms.kubernetes.pod_restarts import PodStatusRestarts
from plimsoll.shared.pod_names import target_replica


class _NoPrometheus:
    """Stands in when no Prometheus is known: every role unreadable, and why."""

    def __init__(self, roles: list[str]) -> None:
        self._roles = roles

    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        reason = "no Prometheus: set spec.metrics.prometheusUrl or PLIMSOLL_PROMETHEUS_URL"
        return {role: unreadable("prometheus", reason) for role in self._roles}


def source_before_start(
    run: RunIdentity, spec: CapacityTestSpec, options: KubernetesOptions
) -> MetricsSource | None:
    """The Prometheus the trials will be read from, before the pods exist: its scrape
    interval shows in the series it already has (the kubelets' cAdvisor)."""
    url = spec.metrics.prometheus_url or options.prometheus_url
    if not url or spec.target.url is not None or spec.target.autoscaler is not None:
        return None
    selector = Selector(run.namespace, names.target_pod_pattern(run.variant), "target")
    return PrometheusSource(
        url, {ROLE_TARGET: selector}, scrape_interval=spec.metrics.scrape_interval
    )


def role_selectors(run: RunIdentity, spec: CapacityTestSpec) -> dict[str, Selector]:
    """Each role's pods in the run's namespace: the target (every replica its own role,
    as locally), the mocks, the generators and the dependency services."""
    ns, variant = run.namespace, run.variant
    selectors = {
        ROLE_TARGET: Selector(ns, names.target_pod_pattern(variant), container="target"),
        ROLE_MOCK: Selector(ns, names.mock_pod_pattern(variant)),
        ROLE_GENERATOR: Selector(ns, names.generator_pod_pattern(variant)),
    }
    for index in range(1, spec.target.replicas):
        pod = names.target_pod_name(variant, index)
        selectors[target_replica(index)] = Selector(ns, pod, container="target")
    for service in spec.services:
        selectors[service.name] = Selector(ns, names.service_pod_name(service.name, variant))
    for named in spec.upstreams:
        selectors[mock_role(named.name)] = Selector(
            ns, names.named_mock_pod_pattern(named.name, variant)
        )
    if spec.target.url is not None:  # nothing of ours to select: no target series
        del selectors[ROLE_TARGET]
    elif spec.target.autoscaler is not None:
        # A flight's replicas come and go under generated names, and what the judgement
        # needs of their CPU is what the HPA read (`watched_hpa`): no series of one pod
        # stands for the target here.
        del selectors[ROLE_TARGET]
    return selectors


def run_source(
    client: KubeClient, run: RunIdentity, spec: CapacityTestSpec, options: KubernetesOptions
) -> MetricsSource:
    selectors = role_selectors(run, spec)
    url = spec.metrics.prometheus_url or options.prometheus_url
    if not url:
        return _NoPrometheus(list(selectors))
    return PrometheusSource(
        url,
        selectors,
        scrape_interval=spec.metrics.scrape_interval,
        settle=spec.metrics.settle,
        extra=spec.metrics.extra,
        restarts=PodStatusRestarts(client, run.namespace, run.labels()),
        retry_for=spec.metrics.retry_for,
    )
