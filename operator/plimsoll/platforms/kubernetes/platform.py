"""The Kubernetes platform: one run's pieces as pods in the run's own namespace.

The operator builds one `KubernetesPlatform` per variant (`make_platform`) and the
runner drives it through `plimsoll.platforms.base.Platform`: `start` creates the
namespace (restricted Pod Security), the mock, the dependency services, the
pinned target, the setup Jobs, the generators and their NetworkPolicy, waiting
for each group to be ready, and returns the started run (`started.KubernetesRun`)
the runner asks around each trial; `stop` removes this variant's children (the
operator removes the namespace itself when the run ends, as `spec.cleanup` says,
and on deletion).

Each variant's children have names of their own (`plimsoll.kube.names.child_name`)
and carry its name in a label: with `cleanup: Never` every variant's pods stay side
by side, and with `cleanup: Always` a variant starts only once the previous
variant's pods are gone. Creation is idempotent: an object that already exists and
carries this run's labels *and this variant's* is adopted, so an operator restarted
mid-run (say, in the second variant) picks that variant's pods up again. How objects
are created, adopted, replaced and deleted lives in `plimsoll.kube.ownership`; beside
this module are what is refused before anything is made (`admission`), how a started
run is reached (`endpoints`) and measured (`run_metrics`), and the one translation of
the helpers' errors (`errors`). This one keeps what a run is made of, and in what
order."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import Target
from plimsoll.api.upstream import mock_role
from plimsoll.kube import boundaries, manifests, names, network_policies, ownership
from plimsoll.kube.client import KubeClient
from plimsoll.kube.control_ingress import generator_ingress_policy
from plimsoll.kube.env_copy import copy_references
from plimsoll.kube.grants import ensure_bound
from plimsoll.kube.names import RunIdentity
from plimsoll.kube.wait import wait_quota_counted
from plimsoll.metrics.source import MetricsSource
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.kubernetes import admission, run_metrics
from plimsoll.platforms.kubernetes.autoscaled_target import start_autoscaled
from plimsoll.platforms.kubernetes.control_token import kept_token
from plimsoll.platforms.kubernetes.deployment_source import with_deployment_target
from plimsoll.platforms.kubernetes.errors import platform_errors, translated
from plimsoll.platforms.kubernetes.options import KubernetesOptions
from plimsoll.platforms.kubernetes.run_objects import RunObjects
from plimsoll.platforms.kubernetes.run_pods import generator_pods, mock_pods, replica_pod_names
from plimsoll.platforms.kubernetes.started import KubernetesRun, reached


class KubernetesPlatform:
    name = "kubernetes"

    def __init__(self, client: KubeClient, run: RunIdentity, options: KubernetesOptions) -> None:
        self._client = client
        self.run = run
        self._options = options
        self._objects = RunObjects(client, run, options)
        self._detached = False
        self.target_image: str | None = None  # the image digest the kubelet reported
        # The target as copied from target.fromDeployment (its image as the Deployment
        # names it, the shape it ran at), for the Deployment's contract.
        self.copied_target: Target | None = None

    def detach(self) -> None:
        """The operator is exiting mid-run: `stop` leaves every pod for the next one."""
        self._detached = True

    @translated
    async def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        """Apply `body`, creating it or adopting it if this run (and variant) made it."""
        return await self._objects.apply(body)

    @translated
    async def wait_other_variants_gone(self, limit: float) -> None:
        """Wait until the run's other variants' pods being deleted are gone (`ownership`)."""
        await ownership.wait_other_variants_gone(self._client, self.run, limit, self._options.poll)

    def budget_problem(self, every_variant: Sequence[CapacityTestSpec]) -> str | None:
        """Why the run's quota, sized for `every_variant`, would pass the admin's limits."""
        return admission.budget_problem(every_variant, self._options)

    @translated
    async def start(
        self, spec: CapacityTestSpec, every_variant: Sequence[CapacityTestSpec]
    ) -> KubernetesRun:
        if spec.target.from_deployment is not None:
            spec = await with_deployment_target(
                self._client, spec, self.run.owner_namespace, self._options.identity
            )
            self.copied_target = spec.target
        api_hosts = admission.api_server_hosts(self._client.server)
        problems = await admission.start_problems(spec, self._options, api_hosts)
        if problems:
            raise PlatformError("; ".join(problems))
        await self._namespace()
        await self.wait_other_variants_gone(self._options.ready_timeout)
        await self._bounds_and_policies(spec, every_variant)
        await self._copy_references(spec)
        mock = await self._start_mocks_and_services(spec)
        targets = await self._start_target(spec)
        for step in spec.target.setup:
            job = await self._objects.apply(manifests.setup_job(self.run, step, spec))
            await self._objects.job_done(job["metadata"]["name"], step.timeout)
        token = await self._control_token()
        count = spec.generators.fixed_replicas
        wanted = generator_pods(self.run, spec, self._options.images.generator, count)
        for body in wanted.values():
            await self._objects.fresh(body)
        generators = await self._objects.ready(list(wanted), self._options.ready_timeout)
        endpoints = await reached(self._objects, spec, targets, mock, generators, None)
        return KubernetesRun(
            self._objects, spec, targets, replace(endpoints, control_token=token), count
        )

    async def _bounds_and_policies(
        self, spec: CapacityTestSpec, every_variant: Sequence[CapacityTestSpec]
    ) -> None:
        """Bounds and policies before any pod: nothing in the namespace runs without them."""
        run, apply = self.run, self._objects.apply
        await apply(boundaries.limit_range(run))
        await self._quota_in_force(
            await apply(boundaries.resource_quota(run, every_variant, manifests.KNOWN_SHAPES))
        )
        await apply(network_policies.run_egress_policy(run))
        await apply(network_policies.run_ingress_policy(run))
        await apply(network_policies.generator_network_policy(run, spec))
        await apply(generator_ingress_policy(run, self._options.control_peers()))

    async def _start_mocks_and_services(self, spec: CapacityTestSpec) -> dict[str, Any]:
        """The dependency services and every mock (the default and the named ones:
        equipment, replaced if lost), ready; the default mock's first pod."""
        run, apply = self.run, self._objects.apply
        services = spec.services
        declared = {s.name: s.port for s in services}
        for service in services:
            await apply(manifests.dependency_pod(run, service, declared))
            await apply(manifests.dependency_service(run, service))
        await apply(manifests.mock_config_map(run, spec.upstream))
        await apply(
            manifests.cluster_service(run, names.MOCK_SERVICE, names.ROLE_MOCK, spec.upstream.port)
        )
        for named in spec.upstreams:
            await apply(manifests.named_mock_config_map(run, named))
            await apply(
                manifests.cluster_service(
                    run, names.named_mock_service(named.name), mock_role(named.name), named.port
                )
            )
        mocks_wanted = mock_pods(run, spec, self._options.images.mock)
        for body in mocks_wanted.values():
            await apply(body)
        mock_names = list(mocks_wanted)
        services_pods = [names.service_pod_name(s.name, run.variant) for s in services]
        ready = await self._objects.ready(mock_names + services_pods, self._options.ready_timeout)
        return ready[mock_names[0]]

    async def _start_target(self, spec: CapacityTestSpec) -> list[dict[str, Any]]:
        """Every replica's pod once ready, and the Service in front of them; [] for an
        existing service (nothing to start or pin)."""
        if spec.target.url is not None:
            return []
        if spec.target.autoscaler is not None:
            return await start_autoscaled(self._objects, spec)
        run, apply = self.run, self._objects.apply
        for index in range(spec.target.replicas):
            await apply(manifests.target_pod(run, spec, index))
        await apply(
            manifests.cluster_service(
                run, names.TARGET_SERVICE, names.ROLE_TARGET, spec.target.port
            )
        )
        replicas = replica_pod_names(run, spec)
        ready = await self._objects.ready(replicas, spec.target.startup_timeout)
        targets = [ready[name] for name in replicas]
        for container in targets[0].get("status", {}).get("containerStatuses", []) or []:
            if container.get("name") == "target" and container.get("imageID"):
                self.target_image = container["imageID"]
        return targets

    async def _namespace(self) -> None:
        """Apply the run's namespace: created, or adopted with its Pod Security labels put
        back (someone may have relaxed them on a namespace left by an earlier operator).
        Then, before anything else there, the operator's rights in it: the run role bound
        to its ServiceAccount (again on adoption, in case the binding was removed)."""
        await self._objects.apply(manifests.namespace(self.run))
        identity = self._options.identity
        if identity is not None:
            await ensure_bound(
                self._client,
                identity,
                self.run.namespace,
                identity.run_role,
                labels=self.run.labels(),
                proof=("pods", "create"),
            )

    async def _copy_references(self, spec: CapacityTestSpec) -> None:
        """`valueFrom` values into `run-env`, before any pod that reads them."""
        data = await copy_references(self._client, self.run, spec, self._options.identity)
        if data:
            await self._objects.apply(manifests.run_env_secret(self.run, data))

    async def _quota_in_force(self, quota: dict[str, Any]) -> None:
        options = self._options
        await wait_quota_counted(
            self._client, self.run.namespace, quota, options.ready_timeout, options.poll
        )

    async def _control_token(self) -> str:
        """The run's control-API token: made once and kept in a Secret the generators read,
        so an operator that resumes the run (or adopts its pods) uses the same one."""
        token = await kept_token(self._client, self.run) or secrets.token_urlsafe(24)
        await self._objects.apply(manifests.control_token_secret(self.run, token))
        return token

    def metrics_before_start(self, spec: CapacityTestSpec) -> MetricsSource | None:
        """The Prometheus the trials will be read from, before the pods exist."""
        return run_metrics.source_before_start(self.run, spec, self._options)

    @translated
    async def stop(self, *, keep: bool) -> None:
        await self._objects.close()
        if keep or self._detached:
            return
        await ownership.delete_children(self._client, self.run.namespace, self.run.labels())


async def delete_children(client: KubeClient, namespace: str, labels: dict[str, str]) -> None:
    """Delete what a run (or one variant of it) created inside its namespace."""
    with platform_errors():
        await ownership.delete_children(client, namespace, labels)
