"""The Kubernetes platform: one run's pieces as pods in the run's own namespace.

The operator builds one `KubernetesPlatform` per variant (`make_platform`) and the
runner drives it through `plimsoll.platforms.base.Platform`: `start` creates the
namespace (restricted Pod Security), the mock, the dependency services, the
pinned target, the setup Jobs, the generators and their NetworkPolicy, waiting
for each group to be ready; `metrics` reads the pods from Prometheus; `stop`
removes this variant's children (the operator removes the namespace itself when
the run ends, as `spec.cleanup` says, and on deletion).

Creation is idempotent: an object that already exists and carries this run's
labels is adopted, so an operator restarted mid-run picks its pods up again.
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any

from plimsoll.api.spec import CapacityTestSpec, Variant
from plimsoll.api.step import ResourceUsage
from plimsoll.decide.metrics_policy import metrics_problems
from plimsoll.kube import manifests, names
from plimsoll.kube.client import (
    CONFIG_MAPS,
    JOBS,
    NAMESPACES,
    NETWORK_POLICIES,
    PODS,
    SECRETS,
    SERVICES,
    ConflictError,
    KubeClient,
    KubeError,
    kind_of,
)
from plimsoll.kube.names import Images, RunIdentity
from plimsoll.kube.pod_proxy import PodProxyRelay
from plimsoll.kube.wait import NotReadyError, last_termination, wait_job_done, wait_pods_ready
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
from plimsoll.platforms.base import Endpoints, PlatformError

REACH_POD_IP = "pod-ip"
REACH_PROXY = "proxy"
REACH_AUTO = "auto"


def in_cluster() -> bool:
    return "KUBERNETES_SERVICE_HOST" in os.environ


@dataclass(frozen=True)
class KubernetesOptions:
    images: Images = field(default_factory=Images)
    reach: str = REACH_AUTO  # how the runner reaches generators: pod IP, or the API proxy
    prometheus_url: str | None = None  # the operator's default when the spec names none
    allowed_prometheus: frozenset[str] = frozenset()  # others a spec may name
    ready_timeout: float = 180.0
    poll: float = 0.5

    def uses_proxy(self) -> bool:
        return self.reach == REACH_PROXY or (self.reach == REACH_AUTO and not in_cluster())


class _NoPrometheus:
    """Stands in when no Prometheus is known: every role unreadable, and why."""

    def __init__(self, roles: list[str]) -> None:
        self._roles = roles

    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        reason = "no Prometheus: set spec.metrics.prometheusUrl or PLIMSOLL_PROMETHEUS_URL"
        return {role: unreadable("prometheus", reason) for role in self._roles}


def _host(ip: str) -> str:
    return f"[{ip}]" if ":" in ip else ip


class KubernetesPlatform:
    name = "kubernetes"

    def __init__(self, client: KubeClient, run: RunIdentity, options: KubernetesOptions) -> None:
        self._client = client
        self.run = run
        self._options = options
        self._spec: CapacityTestSpec | None = None
        self._relay: PodProxyRelay | None = None
        self._detached = False
        self.target_image: str | None = None  # the image digest the kubelet reported

    def detach(self) -> None:
        """The operator is exiting mid-run: `stop` leaves every pod for the next one."""
        self._detached = True

    async def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create `body`, or adopt the existing object if this run (and, inside the run's
        namespace, this variant) made it. An object still being deleted, such as the previous
        variant's target, is waited for, then created anew."""
        try:
            return await self._client.create(body)
        except ConflictError:
            meta = body["metadata"]
            existing = await self._client.get(kind_of(body), meta.get("namespace"), meta["name"])
            if existing is not None and existing.get("metadata", {}).get("deletionTimestamp"):
                await self._wait_gone(body, self._options.ready_timeout)
                existing = None
            if existing is None:  # deleted in between, or waited out: create it now
                return await self._client.create(body)
            labels = existing.get("metadata", {}).get("labels")
            shared = body["kind"] == "Namespace"  # every variant of a run lives in it
            if shared and self.run.owns(labels):
                return existing
            if not shared and self.run.owns_for_variant(labels):
                return existing
            if self.run.owns(labels):
                other = (labels or {}).get(names.LABEL_VARIANT, "?")
                raise PlatformError(
                    f"{body['kind']} {meta['name']} was left by variant {other!r} of this run "
                    "(cleanup keeps each variant's pods): with several variants use "
                    "cleanup: Always, or one CapacityTest per variant"
                ) from None
            raise PlatformError(
                f"{body['kind']} {meta['name']} already exists and belongs to another run"
            ) from None
        except KubeError as exc:
            raise PlatformError(
                f"cannot create {body['kind']} {body['metadata']['name']}: {exc.message}"
            ) from exc

    async def fresh(self, body: dict[str, Any], limit: float = 60.0) -> dict[str, Any]:
        """Create `body` anew, replacing one this run left behind: a generator left by an
        operator that was killed mid-trial may still be loading the target."""
        meta = body["metadata"]
        existing = await self._client.get(kind_of(body), meta["namespace"], meta["name"])
        if existing is not None and self.run.owns(existing.get("metadata", {}).get("labels")):
            await self._client.delete(kind_of(body), meta["namespace"], meta["name"])
            await self._wait_gone(body, limit)
        return await self.apply(body)

    async def _wait_gone(self, body: dict[str, Any], limit: float) -> None:
        """Wait until `body`'s namesake, being deleted, is gone (a real kubelet confirms a
        pod's end first); a PlatformError naming it after `limit` seconds."""
        meta = body["metadata"]
        deadline = time.monotonic() + limit
        while await self._client.get(kind_of(body), meta.get("namespace"), meta["name"]):
            if time.monotonic() > deadline:
                raise PlatformError(
                    f"{body['kind']} {meta['name']} is still being deleted after {limit:g} s"
                )
            await asyncio.sleep(self._options.poll)

    async def _ready(self, pod_names: list[str], limit: float) -> dict[str, dict[str, Any]]:
        try:
            return await wait_pods_ready(
                self._client, self.run.namespace, pod_names, limit, self._options.poll
            )
        except NotReadyError as exc:
            raise PlatformError(str(exc)) from exc

    async def _job_done(self, name: str, limit: float) -> None:
        try:
            await wait_job_done(self._client, self.run.namespace, name, limit)
        except NotReadyError as exc:
            raise PlatformError(str(exc)) from exc

    async def start(self, spec: CapacityTestSpec, variant: Variant | None) -> Endpoints:
        self._spec = spec
        del variant  # already applied to `spec`; the run identity carries its name
        run, images, limit = self.run, self._options.images, self._options.ready_timeout
        allowed = {*self._options.allowed_prometheus}
        if self._options.prometheus_url:
            allowed.add(self._options.prometheus_url)
        problems = [
            *metrics_problems(spec, allowed),
            images.refused("spec.generators.image", spec.generators.image),
            images.refused("spec.upstream.image", spec.upstream.image),
        ]
        if any(problems):
            raise PlatformError("; ".join(p for p in problems if p))
        await self._namespace()
        # Policies before any pod: nothing in the namespace ever runs without them.
        await self.apply(manifests.run_egress_policy(run))
        await self.apply(manifests.generator_network_policy(run, spec))

        services = spec.services
        for service in services:
            declared = {s.name: s.port for s in services}
            await self.apply(manifests.dependency_pod(run, service, declared))
            await self.apply(manifests.dependency_service(run, service))
        await self.apply(manifests.mock_config_map(run, spec.upstream))
        mock_names = [names.mock_pod_name(i) for i in range(spec.upstream.replicas)]
        for index in range(spec.upstream.replicas):
            await self.apply(manifests.mock_pod(run, index, spec.upstream, images.mock))
        await self.apply(
            manifests.cluster_service(run, names.MOCK_SERVICE, names.ROLE_MOCK, spec.upstream.port)
        )
        mocks = await self._ready(
            mock_names + [names.service_pod_name(s.name) for s in services], limit
        )

        target: dict[str, Any] | None = None
        if spec.target.url is None:  # else an existing service: nothing to start or pin
            await self.apply(manifests.target_pod(run, spec))
            await self.apply(
                manifests.cluster_service(
                    run, names.TARGET_SERVICE, names.ROLE_TARGET, spec.target.port
                )
            )
            target_name = names.target_pod_name()
            target = (await self._ready([target_name], spec.target.startup_timeout))[target_name]
            for container in target.get("status", {}).get("containerStatuses", []) or []:
                if container.get("name") == "target" and container.get("imageID"):
                    self.target_image = container["imageID"]

        for step in spec.target.setup:
            job = await self.apply(manifests.setup_job(run, step, spec))
            await self._job_done(job["metadata"]["name"], step.timeout)

        token = await self._control_token()
        gen_names = [names.generator_pod_name(i) for i in range(spec.generators.replicas)]
        for index in range(spec.generators.replicas):
            await self.fresh(manifests.generator_pod(run, index, spec.generators, images.generator))
        generators = await self._ready(gen_names, limit)
        endpoints = await self._endpoints(spec, target, mocks[mock_names[0]], generators)
        return replace(endpoints, control_token=token)

    async def _namespace(self) -> None:
        """Create the run's namespace, or adopt it with its Pod Security labels put back:
        someone may have relaxed them on a namespace left by an earlier operator."""
        body = manifests.namespace(self.run)
        existing = await self.apply(body)
        labels = existing.get("metadata", {}).get("labels") or {}
        wanted = {k: v for k, v in manifests.PSS_LABELS.items() if labels.get(k) != v}
        if wanted:
            try:
                await self._client.patch(
                    NAMESPACES, None, self.run.namespace, {"metadata": {"labels": wanted}}
                )
            except KubeError as exc:
                raise PlatformError(
                    f"cannot restore the Pod Security labels of {self.run.namespace}: {exc.message}"
                ) from exc

    async def _control_token(self) -> str:
        """The run's control-API token: made once and kept in a Secret the generators read,
        so an operator that resumes the run (or adopts its pods) uses the same one."""
        secret = await self.apply(
            manifests.control_token_secret(self.run, secrets.token_urlsafe(24))
        )
        encoded = (secret.get("data") or {}).get(manifests.CONTROL_TOKEN_KEY)
        if encoded:
            return base64.b64decode(encoded).decode()
        # An API server answers with `data`; one that echoes the request keeps `stringData`.
        return str(secret["stringData"][manifests.CONTROL_TOKEN_KEY])

    async def _endpoints(
        self,
        spec: CapacityTestSpec,
        target: dict[str, Any] | None,
        mock: dict[str, Any],
        generators: dict[str, dict[str, Any]],
    ) -> Endpoints:
        ns = self.run.namespace
        if self._options.uses_proxy():
            if self._relay is None:
                self._relay = PodProxyRelay(self._client)
                await self._relay.start()
            relay = self._relay
            urls = [relay.url_for(ns, name, names.GENERATOR_PORT) for name in generators]
        else:
            urls = [
                f"http://{_host(pod['status']['podIP'])}:{names.GENERATOR_PORT}"
                for pod in generators.values()
            ]
        target_node = target.get("spec", {}).get("nodeName") if target is not None else None
        placement, warnings = [], []
        if spec.target.teardown:
            warnings.append(
                "target.teardown runs on the local platform only: here the run's namespace, "
                "with its services and what the setup put in them, is deleted at cleanup"
            )
        if target is None:
            placement.append(f"target: existing service at {spec.target.url} (not started)")
            warning = manifests.external_target_warning(spec)
            if warning is not None:
                warnings.append(warning)
        for pod in [p for p in (target, mock, *generators.values()) if p is not None]:
            node = pod.get("spec", {}).get("nodeName") or "unknown node"
            placement.append(f"{pod['metadata']['name']} on {node} ({pod['status']['podIP']})")
            if (
                pod is not target
                and target_node
                and pod.get("spec", {}).get("nodeName") == target_node
            ):
                warnings.append(
                    f"{pod['metadata']['name']} shares node {target_node} with the target"
                )
        target_url = (
            f"http://{_host(target['status']['podIP'])}:{spec.target.port}"
            if target is not None
            else str(spec.target.url).rstrip("/")
        )
        return Endpoints(
            target_url=target_url,
            upstream_url=f"http://{_host(mock['status']['podIP'])}:{spec.upstream.port}",
            generator_urls=urls,
            placement=placement,
            warnings=warnings,
        )

    async def ensure_ready(self) -> None:
        """Before each trial: wait while the kubelet restarts the target (an OOM kill, a
        crash); a target in CrashLoopBackOff, or not back within its startup timeout, stops
        the run with the container's last termination (reason, exit code)."""
        spec = self._spec
        if spec is None:
            raise PlatformError("ensure_ready() asked before start()")
        if spec.target.url is not None:
            return  # an existing service: not ours to wait for
        try:
            await wait_pods_ready(
                self._client,
                self.run.namespace,
                [names.target_pod_name()],
                spec.target.startup_timeout,
                self._options.poll,
            )
        except NotReadyError as exc:
            pod = await self._client.get(PODS, self.run.namespace, names.target_pod_name())
            last = last_termination(pod) if pod is not None else None
            reason = f"the target cannot run: {exc}" + (f"; {last}" if last else "")
            raise PlatformError(reason) from exc

    def metrics(self) -> MetricsSource:
        spec = self._spec
        if spec is None:
            raise PlatformError("metrics() asked before start()")
        ns = self.run.namespace
        selectors = {
            ROLE_TARGET: Selector(ns, "target", container="target"),
            ROLE_MOCK: Selector(ns, "mock-[0-9]+"),
            ROLE_GENERATOR: Selector(ns, "generator-[0-9]+"),
        }
        for service in spec.services:
            selectors[service.name] = Selector(ns, names.service_pod_name(service.name))
        if spec.target.url is not None:  # nothing of ours to select: no target series
            del selectors[ROLE_TARGET]
        url = spec.metrics.prometheus_url or self._options.prometheus_url
        if not url:
            return _NoPrometheus(list(selectors))
        return PrometheusSource(
            url,
            selectors,
            scrape_interval=spec.metrics.scrape_interval,
            settle=spec.metrics.settle,
            extra=spec.metrics.extra,
            retry_for=spec.metrics.retry_for,
        )

    async def stop(self, *, keep: bool) -> None:
        if self._relay is not None:
            await self._relay.stop()
            self._relay = None
        if keep or self._detached:
            return
        await delete_children(self._client, self.run.namespace, self.run.labels())


async def delete_children(client: KubeClient, namespace: str, labels: dict[str, str]) -> None:
    """Delete what a run (or one variant of it) created inside its namespace."""
    for kind in (NETWORK_POLICIES, JOBS, PODS, SERVICES, CONFIG_MAPS, SECRETS):
        try:
            for item in await client.list(kind, namespace, labels):
                await client.delete(kind, namespace, item["metadata"]["name"])
        except KubeError as exc:
            raise PlatformError(
                f"cannot clean up {kind.plural} in {namespace}: {exc.message}"
            ) from exc
