"""The local platform's processes as Prometheus sees them: exported, selected, waited for.

`plimsoll run` serves every process the local platform starts through one
`CadvisorExporter` (cAdvisor's metric names, labelled like Kubernetes
containers), so a Prometheus that scrapes it answers the very PromQL the
Kubernetes platform asks. This module keeps the two sides in step: `LocalExport`
registers each process under the pod name the Kubernetes platform would give
it (target `target`, mock `mock-0`, generators `generator-N`, services
`svc-NAME`), in a namespace of its own per run and variant, and `role_selectors`
builds the same selectors the Kubernetes platform builds. `await_scraped` holds
the start until Prometheus holds a series of every role, so the first trial's
window is not read before the first scrape. Without Prometheus, the platform's
own samplers answer instead (`LocalSourceWithRestarts`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import ResourceUsage
from plimsoll.api.upstream import mock_role
from plimsoll.api.urls import redact_url
from plimsoll.metrics.cgroup import CgroupPaths, CgroupReadError, read_sample
from plimsoll.metrics.exporter import CadvisorExporter, ExportedContainer
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.prometheus_http import PrometheusAPI, PrometheusHTTPError
from plimsoll.metrics.promql import Selector
from plimsoll.metrics.relay import RelayedExporter
from plimsoll.metrics.sampler import LocalSource
from plimsoll.metrics.source import ROLE_GENERATOR, ROLE_MOCK, ROLE_TARGET, Window
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.restarter import Restarter
from plimsoll.shared.pod_names import (
    generator_pod_name,
    generator_pod_pattern,
    mock_pod_name,
    mock_pod_pattern,
    named_mock_pod_name,
    named_mock_pod_pattern,
    service_pod_name,
    target_pod_name,
    target_pod_pattern,
)


def pod_of(role: str) -> tuple[str, str]:
    """(pod, container) for a local role, as the Kubernetes platform names them."""
    if role == ROLE_TARGET:
        return target_pod_name(), "target"
    if role == ROLE_MOCK:
        return mock_pod_name(0), "mock"
    if role.startswith(f"{ROLE_MOCK}-"):  # a named mock: mock-auth -> pod mock-auth-0
        return named_mock_pod_name(role.removeprefix(f"{ROLE_MOCK}-"), 0), "mock"
    if role == ROLE_GENERATOR:
        return generator_pod_name(0), "generator"
    if role.startswith(f"{ROLE_GENERATOR}-"):
        return generator_pod_name(int(role.rsplit("-", 1)[1])), "generator"
    return service_pod_name(role), role


def role_selectors(
    namespace: str, services: Sequence[str], mocks: Sequence[str] = ()
) -> dict[str, Selector]:
    """The selectors of the local platform's Prometheus source (`prometheus_source`), the
    same the Kubernetes platform builds: one per role, generators summed together, each
    named mock its own."""
    selectors = {
        ROLE_TARGET: Selector(namespace, target_pod_pattern(), container="target"),
        ROLE_MOCK: Selector(namespace, mock_pod_pattern()),
        ROLE_GENERATOR: Selector(namespace, generator_pod_pattern()),
    }
    for name in services:
        selectors[name] = Selector(namespace, service_pod_name(name))
    for name in mocks:
        selectors[mock_role(name)] = Selector(namespace, named_mock_pod_pattern(name))
    return selectors


class LocalExport:
    """The containers one local platform registered on the shared exporter."""

    def __init__(self, exporter: CadvisorExporter, namespace: str) -> None:
        self.exporter = exporter
        self.namespace = namespace
        self.containers: dict[str, ExportedContainer] = {}
        self.relays: list[RelayedExporter] = []
        self._oom_seen = 0  # the target cgroup's OOM kills at its last (re)start

    def add(self, role: str, *, pgid: int | None = None, paths: CgroupPaths | None = None) -> None:
        pod, container = pod_of(role)
        exported = ExportedContainer(self.namespace, pod, container, paths=paths, pgid=pgid)
        old = self.containers.get(role)
        if old is not None:  # a restart: same container, new process, restarts carried on
            exported.restarts = old.restarts
            exported.last_terminated_reason = old.last_terminated_reason
            self.exporter.containers.remove(old)
        self.containers[role] = exported
        self.exporter.add(exported)
        if role == ROLE_TARGET and paths is not None:
            self._oom_seen = _oom_kills(paths)

    def relay(self, role: str, url: str) -> None:
        """Serve a service's own exporter page (`url`) under the service's pod name."""
        pod, container = pod_of(role)
        relayed = RelayedExporter(self.namespace, pod, container, url)
        self.relays.append(relayed)
        self.exporter.relays.append(relayed)

    def restarted(self, role: str, exit_code: int | None) -> None:
        """Count a restart the way kube-state-metrics shows it, with why it stopped."""
        exported = self.containers.get(role)
        if exported is None:
            return
        exported.restarts += 1
        reason = "Completed" if exit_code == 0 else "Error"
        if exported.paths is not None:
            now = _oom_kills(exported.paths)
            if now > self._oom_seen:
                reason = "OOMKilled"
            self._oom_seen = now
        exported.last_terminated_reason = reason

    def remove_all(self) -> None:
        for relayed in self.relays:
            if relayed in self.exporter.relays:
                self.exporter.relays.remove(relayed)
        self.relays.clear()
        for exported in self.containers.values():
            if exported in self.exporter.containers:
                self.exporter.containers.remove(exported)
        self.containers.clear()


class LocalSourceWithRestarts:
    """The cgroup and /proc `LocalSource`, plus the target's restarts in each window."""

    def __init__(self, source: LocalSource, restarter: Restarter | None) -> None:
        self.source = source
        self.restarter = restarter

    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        usage = await self.source.usage(window)
        target = usage.get(ROLE_TARGET)
        if target is not None and target.source == "proc":
            # Unpinned, the target has no memory limit of its own, so no limit can OOM-kill
            # it: that figure is not missing, it does not apply (restarts still count).
            target.missing = [m for m in target.missing if "OOM kills" not in m]
        if target is not None and self.restarter is not None:
            target.restarts = self.restarter.restarts_between(
                window.start.timestamp(), window.end.timestamp()
            )
        return usage


def _oom_kills(paths: CgroupPaths) -> int:
    try:
        return read_sample(paths, time.time()).oom_kills or 0
    except CgroupReadError:
        return 0


def prometheus_source(
    url: str,
    namespace: str,
    spec: CapacityTestSpec,
    services: Sequence[str],
    mocks: Sequence[str] = (),
) -> PrometheusSource:
    """The Kubernetes platform's source, over the local exporter's labels. The scrape
    interval is the spec's when it names one, else the server's own (discovered)."""
    metrics = spec.metrics
    return PrometheusSource(
        url,
        role_selectors(namespace, services, mocks),
        scrape_interval=metrics.scrape_interval,
        settle=metrics.settle,
        extra=metrics.extra,
        retry_for=metrics.retry_for,
    )


async def await_scraped(
    source: PrometheusSource, exporter: CadvisorExporter, *, within: float
) -> None:
    """Until Prometheus answers with a series for every role; a clear error otherwise.
    Asked directly (not through the source, whose retries give up for good)."""
    deadline = time.monotonic() + within
    pending = list(source.selectors.items())
    last = "no answer yet"
    api = PrometheusAPI(source.url, timeout=2.0)
    while pending:
        role, selector = pending[0]
        query = f"count(container_memory_working_set_bytes{selector.matchers()})"
        try:
            if await api.instant(query):
                pending.pop(0)
                continue
            last = f"no data (query: {query})"
        except PrometheusHTTPError as exc:
            last = exc.reason
        if time.monotonic() > deadline:
            raise PlatformError(
                f"Prometheus at {redact_url(source.url)} shows no series of the {role} within "
                f"{within:g}s ({last}): add the exporter {exporter.address} to its scrape "
                "targets (honor_labels: true), or check --prometheus"
            )
        await asyncio.sleep(0.25)
