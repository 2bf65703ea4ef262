"""The Kubernetes platform: one run's pieces as pods in the run's own namespace.

The operator builds one `KubernetesPlatform` per variant (`make_platform`) and the
runner drives it through `plimsoll.platforms.base.Platform`: `start` creates the
namespace (restricted Pod Security), the mock, the dependency services, the
pinned target, the setup Jobs, the generators and their NetworkPolicy, waiting
for each group to be ready; `metrics` reads the pods from Prometheus; `stop`
removes this variant's children (the operator removes the namespace itself when
the run ends, as `spec.cleanup` says, and on deletion).

Each variant's children have names of their own (`plimsoll.kube.names.child_name`)
and carry its name in a label: with `cleanup: Never` every variant's pods stay side
by side, and with `cleanup: Always` a variant starts only once the previous
variant's pods are gone. Creation is idempotent: an object that already exists and
carries this run's labels *and this variant's* is adopted, so an operator restarted
mid-run (say, in the second variant) picks that variant's pods up again. How objects
are created, adopted, replaced and deleted lives in `plimsoll.kube.ownership`; beside
this module are what is refused before anything is made (`admission`), how a started
run is reached (`endpoints`) and measured (`run_metrics`). This one keeps what a run is
made of, and in what order."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from plimsoll.api.faults import Fault
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import Target
from plimsoll.api.upstream import mock_role
from plimsoll.kube import boundaries, manifests, names, network_policies, ownership
from plimsoll.kube.client import PODS, KubeClient, KubeError
from plimsoll.kube.control_ingress import generator_ingress_policy
from plimsoll.kube.env_copy import ValueSourceError, copy_references
from plimsoll.kube.grants import GrantError, ensure_bound
from plimsoll.kube.names import RunIdentity
from plimsoll.kube.pod_proxy import PodProxyRelay
from plimsoll.kube.wait import (
    MAX_RESTART_BACKOFF,
    NotReadyError,
    last_termination,
    oom_killed,
    pod_lost,
    wait_job_done,
    wait_pods_ready,
    wait_quota_counted,
)
from plimsoll.metrics.source import MetricsSource
from plimsoll.platforms.base import Endpoints, PlatformError, Restored
from plimsoll.platforms.kubernetes import admission, run_metrics
from plimsoll.platforms.kubernetes.control_token import kept_token
from plimsoll.platforms.kubernetes.deployment_source import with_deployment_target
from plimsoll.platforms.kubernetes.endpoints import host_literal, run_endpoints
from plimsoll.platforms.kubernetes.options import KubernetesOptions
from plimsoll.platforms.kubernetes.run_pods import generator_pods, mock_pods, replica_pod_names
from plimsoll.platforms.replacements import ReplacementBudget
from plimsoll.shared.pod_names import target_replica


class KubernetesPlatform:
    name = "kubernetes"
    # An unset generators.replicas runs one pod here; `auto` must be asked for, since each
    # pod asks the cluster for its own requests (the run's quota covers maxReplicas).
    generators_sized_by_default = False

    def __init__(self, client: KubeClient, run: RunIdentity, options: KubernetesOptions) -> None:
        self._client = client
        self.run = run
        self._options = options
        self._spec: CapacityTestSpec | None = None
        self._relay: PodProxyRelay | None = None
        self._detached = False
        # Every replica's pod as started (placement, node); [] for an existing service.
        self._targets: list[dict[str, Any]] = []
        self._held: set[int] = set()  # replicas a fault took away, until brought back
        self._replacements = ReplacementBudget()
        self._generator_count = 1  # pods generator-0 .. count-1; auto adds, never removes
        self.target_image: str | None = None  # the image digest the kubelet reported
        # The target as copied from target.fromDeployment (its image as the Deployment
        # names it, the shape it ran at), for the Deployment's contract.
        self.copied_target: Target | None = None

    def detach(self) -> None:
        """The operator is exiting mid-run: `stop` leaves every pod for the next one."""
        self._detached = True

    async def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        """Apply `body`, creating it or adopting it if this run (and variant) made it
        (`ownership`)."""
        try:
            return await ownership.apply_owned(
                self._client,
                self.run,
                body,
                limit=self._options.ready_timeout,
                poll=self._options.poll,
            )
        except ownership.OwnershipError as exc:
            raise PlatformError(str(exc)) from exc

    async def fresh(self, body: dict[str, Any], limit: float = 60.0) -> dict[str, Any]:
        """Create `body` anew, replacing one this run left behind: a generator left by an
        operator that was killed mid-trial may still be loading the target."""
        try:
            return await ownership.recreate(
                self._client,
                self.run,
                body,
                limit=limit,
                adopt_limit=self._options.ready_timeout,
                poll=self._options.poll,
            )
        except ownership.OwnershipError as exc:
            raise PlatformError(str(exc)) from exc

    async def wait_other_variants_gone(self, limit: float) -> None:
        """Wait until the run's other variants' pods being deleted are gone (`ownership`)."""
        try:
            await ownership.wait_other_variants_gone(
                self._client, self.run, limit, self._options.poll
            )
        except ownership.OwnershipError as exc:
            raise PlatformError(str(exc)) from exc

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

    def budget_problem(self, every_variant: Sequence[CapacityTestSpec]) -> str | None:
        """Why the run's quota, sized for `every_variant`, would pass the admin's limits."""
        return admission.budget_problem(every_variant, self._options)

    async def start(
        self, spec: CapacityTestSpec, every_variant: Sequence[CapacityTestSpec]
    ) -> Endpoints:
        if spec.target.from_deployment is not None:
            spec = await with_deployment_target(
                self._client, spec, self.run.owner_namespace, self._options.identity
            )
            self.copied_target = spec.target
        self._spec = spec
        self._generator_count = spec.generators.fixed_replicas
        run, limit = self.run, self._options.ready_timeout
        api_hosts = admission.api_server_hosts(self._client.server)
        problems = await admission.start_problems(spec, self._options, api_hosts)
        if problems:
            raise PlatformError("; ".join(problems))
        await self._namespace()
        await self.wait_other_variants_gone(limit)
        # Bounds and policies before any pod: nothing in the namespace runs without them.
        await self.apply(boundaries.limit_range(run))
        await self._quota_in_force(
            await self.apply(boundaries.resource_quota(run, every_variant, manifests.KNOWN_SHAPES))
        )
        await self.apply(network_policies.run_egress_policy(run))
        await self.apply(network_policies.run_ingress_policy(run))
        await self.apply(network_policies.generator_network_policy(run, spec))
        await self.apply(generator_ingress_policy(run, self._options.control_peers()))

        await self._copy_references(spec)
        services = spec.services
        for service in services:
            declared = {s.name: s.port for s in services}
            await self.apply(manifests.dependency_pod(run, service, declared))
            await self.apply(manifests.dependency_service(run, service))
        await self.apply(manifests.mock_config_map(run, spec.upstream))
        await self.apply(
            manifests.cluster_service(run, names.MOCK_SERVICE, names.ROLE_MOCK, spec.upstream.port)
        )
        for named in spec.upstreams:
            await self.apply(manifests.named_mock_config_map(run, named))
            await self.apply(
                manifests.cluster_service(
                    run, names.named_mock_service(named.name), mock_role(named.name), named.port
                )
            )
        # Every mock's pods (the default and the named ones): equipment, replaced if lost.
        mocks_wanted = self._mock_pods(spec)
        mock_names = list(mocks_wanted)
        for body in mocks_wanted.values():
            await self.apply(body)
        mocks = await self._ready(
            mock_names + [names.service_pod_name(s.name, run.variant) for s in services], limit
        )

        self._targets = []
        if spec.target.url is None:  # else an existing service: nothing to start or pin
            for index in range(spec.target.replicas):
                await self.apply(manifests.target_pod(run, spec, index))
            await self.apply(
                manifests.cluster_service(
                    run, names.TARGET_SERVICE, names.ROLE_TARGET, spec.target.port
                )
            )
            replicas = self._replica_pod_names(spec)
            ready = await self._ready(replicas, spec.target.startup_timeout)
            self._targets = [ready[name] for name in replicas]
            for container in self._targets[0].get("status", {}).get("containerStatuses", []) or []:
                if container.get("name") == "target" and container.get("imageID"):
                    self.target_image = container["imageID"]

        for step in spec.target.setup:
            job = await self.apply(manifests.setup_job(run, step, spec))
            await self._job_done(job["metadata"]["name"], step.timeout)

        token = await self._control_token()
        generators_wanted = self._generator_pods(spec)
        for body in generators_wanted.values():
            await self.fresh(body)
        generators = await self._ready(list(generators_wanted), limit)
        endpoints = await self._endpoints(spec, mocks[mock_names[0]], generators)
        return replace(endpoints, control_token=token)

    def _replica_pod_names(self, spec: CapacityTestSpec) -> list[str]:
        return replica_pod_names(self.run, spec)

    def _mock_pods(self, spec: CapacityTestSpec) -> dict[str, dict[str, Any]]:
        return mock_pods(self.run, spec, self._options.images.mock)

    def _generator_pods(self, spec: CapacityTestSpec) -> dict[str, dict[str, Any]]:
        image = self._options.images.generator
        return generator_pods(self.run, spec, image, self._generator_count)

    async def scale_generators(self, endpoints: Endpoints, count: int) -> Endpoints:
        """Create generator pods until `count` are ready (`generators.replicas: auto`;
        never fewer than now); `endpoints` with every generator's URL, each new pod's
        placement added. The pods spread over nodes (`manifests.generator_pod`)."""
        spec = self._spec
        if spec is None:
            raise PlatformError("scale_generators() asked before start()")
        if count <= self._generator_count:
            return endpoints
        before = set(self._generator_pods(spec))
        self._generator_count = count
        wanted = self._generator_pods(spec)
        for name in wanted.keys() - before:
            await self.fresh(wanted[name])
        ready = await self._ready(list(wanted), self._options.ready_timeout)
        added = [
            f"{name} on {ready[name].get('spec', {}).get('nodeName') or 'unknown node'}"
            f" ({ready[name]['status']['podIP']})"
            for name in wanted
            if name not in before
        ]
        return replace(
            endpoints,
            generator_urls=await self._generator_urls(ready),
            placement=[*endpoints.placement, *added],
        )

    async def _generator_urls(self, generators: dict[str, dict[str, Any]]) -> list[str]:
        """How the runner reaches each generator: through the API server's pod proxy, or by
        pod IP."""
        if self._options.uses_proxy():
            if self._relay is None:
                self._relay = PodProxyRelay(self._client)
                await self._relay.start()
            relay, ns = self._relay, self.run.namespace
            return [relay.url_for(ns, name, names.GENERATOR_PORT) for name in generators]
        return [
            f"http://{host_literal(pod['status']['podIP'])}:{names.GENERATOR_PORT}"
            for pod in generators.values()
        ]

    async def lost_equipment(self) -> dict[str, str]:
        return {f"pod {name}": why for name, why in (await self._lost_pods()).items()}

    async def _lost_pods(self) -> dict[str, str]:
        """Every mock or generator pod (by name) that is missing, being deleted or ended,
        and why: one LIST of the variant's pods."""
        spec = self._spec
        if spec is None:
            raise PlatformError("asked for the run's pods before start()")
        try:
            present = {
                pod["metadata"]["name"]: pod
                for pod in await self._client.list(PODS, self.run.namespace, self.run.labels())
            }
        except KubeError as exc:
            raise PlatformError(f"cannot list the run's pods: {exc.message}") from exc
        lost = {}
        for name in [*self._mock_pods(spec), *self._generator_pods(spec)]:
            why = pod_lost(present.get(name))
            if why is not None:
                lost[name] = why
        return lost

    async def replace_lost(self, endpoints: Endpoints) -> Restored:
        """Before each trial: create again (same spec, same name) every mock or generator
        pod that is missing, being deleted (evicted) or ended, within the variant's budget;
        wait until all are ready, and hand back the endpoints with their new pod IPs. The
        target reaches the mock through its Service, so a new mock needs nothing more."""
        spec = self._spec
        if spec is None:
            raise PlatformError("replace_lost() asked before start()")
        mocks, generators = self._mock_pods(spec), self._generator_pods(spec)
        wanted = {**mocks, **generators}
        replaced: list[str] = []
        for name, why in (await self._lost_pods()).items():
            replaced.append(self._replacements.spend(f"pod {name}", why))
            await self.fresh(wanted[name], self._options.ready_timeout)
        if not replaced:
            return Restored(endpoints)
        ready = await self._ready([*mocks, *generators], self._options.ready_timeout)
        fresh = await self._endpoints(
            spec,
            ready[next(iter(mocks))],
            {name: ready[name] for name in generators},
        )
        return Restored(replace(fresh, control_token=endpoints.control_token), replaced)

    async def _namespace(self) -> None:
        """Apply the run's namespace: created, or adopted with its Pod Security labels put
        back (someone may have relaxed them on a namespace left by an earlier operator).
        Then, before anything else there, the operator's rights in it: the run role bound
        to its ServiceAccount (again on adoption, in case the binding was removed)."""
        await self.apply(manifests.namespace(self.run))
        identity = self._options.identity
        if identity is not None:
            try:
                await ensure_bound(
                    self._client,
                    identity,
                    self.run.namespace,
                    identity.run_role,
                    labels=self.run.labels(),
                    proof=("pods", "create"),
                )
            except GrantError as exc:
                raise PlatformError(str(exc)) from exc

    async def _copy_references(self, spec: CapacityTestSpec) -> None:
        """`valueFrom` values into `run-env`, before any pod that reads them."""
        try:
            data = await copy_references(self._client, self.run, spec, self._options.identity)
        except (ValueSourceError, GrantError) as exc:
            raise PlatformError(str(exc)) from exc
        if data:
            await self.apply(manifests.run_env_secret(self.run, data))

    async def _quota_in_force(self, quota: dict[str, Any]) -> None:
        try:
            await wait_quota_counted(
                self._client,
                self.run.namespace,
                quota,
                self._options.ready_timeout,
                self._options.poll,
            )
        except NotReadyError as exc:
            raise PlatformError(str(exc)) from exc

    async def _control_token(self) -> str:
        """The run's control-API token: made once and kept in a Secret the generators read,
        so an operator that resumes the run (or adopts its pods) uses the same one."""
        token = await kept_token(self._client, self.run) or secrets.token_urlsafe(24)
        await self.apply(manifests.control_token_secret(self.run, token))
        return token

    async def _endpoints(
        self,
        spec: CapacityTestSpec,
        mock: dict[str, Any],
        generators: dict[str, dict[str, Any]],
    ) -> Endpoints:
        return run_endpoints(
            spec,
            self.run,
            self._targets,
            mock,
            generators,
            await self._generator_urls(generators),
            open_control=self._options.control_peers() is None,
            api_hosts=admission.api_server_hosts(self._client.server),
            allowed_target_hosts=self._options.allowed_target_hosts,
            faults=self,
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
        # Replicas a fault took away in the last trial come back first, as locally.
        for index in sorted(self._held):
            await self.apply(manifests.target_pod(self.run, spec, index))
        self._held.clear()
        replicas = self._replica_pod_names(spec)
        pods = [await self._client.get(PODS, self.run.namespace, name) for name in replicas]
        # A real kubelet backs off before restarting an OOM-killed container (10 s,
        # doubling): CrashLoopBackOff then means "later", not "never".
        after_oom = any(pod is not None and oom_killed(pod) for pod in pods)
        limit = spec.target.startup_timeout + (MAX_RESTART_BACKOFF if after_oom else 0.0)
        try:
            await wait_pods_ready(
                self._client,
                self.run.namespace,
                replicas,
                limit,
                self._options.poll,
                after_oom=after_oom,
            )
        except NotReadyError as exc:
            pods = [await self._client.get(PODS, self.run.namespace, name) for name in replicas]
            last = next(
                (t for pod in pods if pod is not None and (t := last_termination(pod))), None
            )
            reason = f"the target cannot run: {exc}" + (f"; {last}" if last else "")
            raise PlatformError(reason) from exc

    async def fire(self, fault: Fault) -> list[str]:
        """Take replicas away mid-trial, or bring a zone back; the replicas it touched.
        `kill` deletes the last running ones, `remove` every one in the zone, both with
        grace period 0 (the pod is gone at once, as when its node is lost); they stay
        away until `restore` or the next trial. `restore` creates the zone's pods again
        and returns once they are ready: the EndpointSlices then route to them again."""
        spec = self._spec
        if spec is None:
            raise PlatformError("fire() asked before start()")
        variant, namespace = self.run.variant, self.run.namespace
        if fault.restore is not None:
            zone = fault.restore.zone
            back = [i for i in sorted(self._held) if manifests.replica_zone(spec, i) == zone]
            for index in back:
                await self.apply(manifests.target_pod(self.run, spec, index))
            await self._ready(
                [names.target_pod_name(variant, i) for i in back], spec.target.startup_timeout
            )
            self._held -= set(back)
            return [target_replica(i) for i in back]
        running = [i for i in range(spec.target.replicas) if i not in self._held]
        if fault.kill is not None:
            victims = running[len(running) - fault.kill.replicas :]
        elif fault.remove is not None:
            zone = fault.remove.zone
            victims = [i for i in running if manifests.replica_zone(spec, i) == zone]
        else:
            victims = []
        self._held |= set(victims)
        await asyncio.gather(
            *(
                self._client.delete(PODS, namespace, names.target_pod_name(variant, i), grace=0)
                for i in victims
            )
        )
        return [target_replica(i) for i in victims]

    def metrics_before_start(self, spec: CapacityTestSpec) -> MetricsSource | None:
        """The Prometheus the trials will be read from, before the pods exist."""
        return run_metrics.source_before_start(self.run, spec, self._options)

    def metrics(self) -> MetricsSource:
        spec = self._spec
        if spec is None:
            raise PlatformError("metrics() asked before start()")
        return run_metrics.run_source(self._client, self.run, spec, self._options)

    async def stop(self, *, keep: bool) -> None:
        if self._relay is not None:
            await self._relay.stop()
            self._relay = None
        if keep or self._detached:
            return
        await delete_children(self._client, self.run.namespace, self.run.labels())


async def delete_children(client: KubeClient, namespace: str, labels: dict[str, str]) -> None:
    """Delete what a run (or one variant of it) created inside its namespace."""
    try:
        await ownership.delete_children(client, namespace, labels)
    except ownership.OwnershipError as exc:
        raise PlatformError(str(exc)) from exc
