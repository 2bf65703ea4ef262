"""A run on Kubernetes once its pods are up: what the runner asks of it around each trial.

`KubernetesPlatform.start` makes one (`plimsoll.platforms.base.StartedRun`): the target
back before a trial (`ensure_ready`), lost mocks and generators noticed and made again
(`lost_equipment`, `replace_lost`), generators added for a higher level
(`scale_generators`), replicas taken away and brought back mid-trial (`fire`), and the
Prometheus its trials are read from (`metrics`). It holds the variant's spec and pods as
the start left them, so nothing here can be asked before there is something to ask."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

from plimsoll.api.faults import Fault
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.kube import manifests, names
from plimsoll.kube.client import PODS
from plimsoll.kube.wait import (
    MAX_RESTART_BACKOFF,
    NotReadyError,
    last_termination,
    oom_killed,
    pod_lost,
    wait_pods_ready,
)
from plimsoll.metrics.source import MetricsSource
from plimsoll.platforms.base import Endpoints, PlatformError, Restored
from plimsoll.platforms.kubernetes import admission, run_metrics
from plimsoll.platforms.kubernetes.autoscaled_target import autoscaled_ready, watched
from plimsoll.platforms.kubernetes.endpoints import run_endpoints
from plimsoll.platforms.kubernetes.errors import platform_errors, translated
from plimsoll.platforms.kubernetes.run_objects import RunObjects
from plimsoll.platforms.kubernetes.run_pods import generator_pods, mock_pods, replica_pod_names
from plimsoll.platforms.replacements import ReplacementBudget
from plimsoll.shared.pod_names import target_replica


async def reached(
    objects: RunObjects,
    spec: CapacityTestSpec,
    targets: list[dict[str, Any]],
    mock: dict[str, Any],
    generators: dict[str, dict[str, Any]],
    started: KubernetesRun | None,
) -> Endpoints:
    """How the runner reaches the run with these pods (`endpoints.run_endpoints`); `started`
    fires its faults, once there is one."""
    options = objects.options
    return run_endpoints(
        spec,
        objects.run,
        targets,
        mock,
        generators,
        await objects.generator_urls(generators),
        open_control=options.control_peers() is None,
        api_hosts=admission.api_server_hosts(objects.client.server),
        allowed_target_hosts=options.allowed_target_hosts,
        faults=started,
    )


@dataclass
class KubernetesRun:
    objects: RunObjects
    spec: CapacityTestSpec
    targets: list[dict[str, Any]]  # every replica's pod as started; [] for an existing service
    endpoints: Endpoints
    generator_count: int  # pods generator-0 .. count-1; auto adds, never removes
    held: set[int] = field(default_factory=set)  # replicas a fault took away, until back
    replacements: ReplacementBudget = field(default_factory=ReplacementBudget)
    # An unset generators.replicas runs one pod here; `auto` must be asked for, since each
    # pod asks the cluster for its own requests (the run's quota covers maxReplicas).
    generators_sized_by_default = False

    def __post_init__(self) -> None:
        if self.spec.target.autoscaler is not None:  # a flight: its replicas are the HPA's
            self.endpoints = replace(self.endpoints, faults=None, autoscaler=watched(self.objects))
        else:
            self.endpoints = replace(self.endpoints, faults=self if self.targets else None)

    def _mock_pods(self) -> dict[str, dict[str, Any]]:
        return mock_pods(self.objects.run, self.spec, self.objects.options.images.mock)

    def _generator_pods(self) -> dict[str, dict[str, Any]]:
        image = self.objects.options.images.generator
        return generator_pods(self.objects.run, self.spec, image, self.generator_count)

    @translated
    async def scale_generators(self, endpoints: Endpoints, count: int) -> Endpoints:
        """Create generator pods until `count` are ready (`generators.replicas: auto`;
        never fewer than now); `endpoints` with every generator's URL, each new pod's
        placement added. The pods spread over nodes (`manifests.generator_pod`)."""
        if count <= self.generator_count:
            return endpoints
        before = set(self._generator_pods())
        self.generator_count = count
        wanted = self._generator_pods()
        for name in wanted.keys() - before:
            await self.objects.fresh(wanted[name])
        ready = await self.objects.ready(list(wanted), self.objects.options.ready_timeout)
        added = [
            f"{name} on {ready[name].get('spec', {}).get('nodeName') or 'unknown node'}"
            f" ({ready[name]['status']['podIP']})"
            for name in wanted
            if name not in before
        ]
        return replace(
            endpoints,
            generator_urls=await self.objects.generator_urls(ready),
            placement=[*endpoints.placement, *added],
        )

    @translated
    async def lost_equipment(self) -> dict[str, str]:
        return {f"pod {name}": why for name, why in (await self._lost_pods()).items()}

    async def _lost_pods(self) -> dict[str, str]:
        """Every mock or generator pod (by name) that is missing, being deleted or ended,
        and why: one LIST of the variant's pods."""
        run = self.objects.run
        with platform_errors("cannot list the run's pods"):
            listed = await self.objects.client.list(PODS, run.namespace, run.labels())
        present = {pod["metadata"]["name"]: pod for pod in listed}
        lost = {}
        for name in [*self._mock_pods(), *self._generator_pods()]:
            why = pod_lost(present.get(name))
            if why is not None:
                lost[name] = why
        return lost

    @translated
    async def replace_lost(self, endpoints: Endpoints) -> Restored:
        """Before each trial: create again (same spec, same name) every mock or generator
        pod that is missing, being deleted (evicted) or ended, within the variant's budget;
        wait until all are ready, and hand back the endpoints with their new pod IPs. The
        target reaches the mock through its Service, so a new mock needs nothing more."""
        mocks, generators = self._mock_pods(), self._generator_pods()
        wanted = {**mocks, **generators}
        replaced: list[str] = []
        limit = self.objects.options.ready_timeout
        for name, why in (await self._lost_pods()).items():
            replaced.append(self.replacements.spend(f"pod {name}", why))
            await self.objects.fresh(wanted[name], limit)
        if not replaced:
            return Restored(endpoints)
        ready = await self.objects.ready([*mocks, *generators], limit)
        mock = ready[next(iter(mocks))]
        fresh = await reached(
            self.objects,
            self.spec,
            self.targets,
            mock,
            {name: ready[name] for name in generators},
            self,
        )
        return Restored(replace(fresh, control_token=endpoints.control_token), replaced)

    @translated
    async def ensure_ready(self) -> None:
        """Before each trial: wait while the kubelet restarts the target (an OOM kill, a
        crash); a target in CrashLoopBackOff, or not back within its startup timeout, stops
        the run with the container's last termination (reason, exit code)."""
        spec, run, client = self.spec, self.objects.run, self.objects.client
        if spec.target.url is not None:
            return  # an existing service: not ours to wait for
        if spec.target.autoscaler is not None:  # a flight's Deployment, back to its fewest
            await autoscaled_ready(self.objects, spec, spec.target.startup_timeout)
            return
        # Replicas a fault took away in the last trial come back first, as locally.
        for index in sorted(self.held):
            await self.objects.apply(manifests.target_pod(run, spec, index))
        self.held.clear()
        replicas = replica_pod_names(run, spec)
        pods = [await client.get(PODS, run.namespace, name) for name in replicas]
        # A real kubelet backs off before restarting an OOM-killed container (10 s,
        # doubling): CrashLoopBackOff then means "later", not "never".
        after_oom = any(pod is not None and oom_killed(pod) for pod in pods)
        limit = spec.target.startup_timeout + (MAX_RESTART_BACKOFF if after_oom else 0.0)
        try:
            await wait_pods_ready(
                client,
                run.namespace,
                replicas,
                limit,
                self.objects.options.poll,
                after_oom=after_oom,
            )
        except NotReadyError as exc:
            pods = [await client.get(PODS, run.namespace, name) for name in replicas]
            last = next(
                (t for pod in pods if pod is not None and (t := last_termination(pod))), None
            )
            reason = f"the target cannot run: {exc}" + (f"; {last}" if last else "")
            raise PlatformError(reason) from exc

    @translated
    async def fire(self, fault: Fault) -> list[str]:
        """Take replicas away mid-trial, or bring a zone back; the replicas it touched.
        `kill` deletes the last running ones, `remove` every one in the zone, both with
        grace period 0 (the pod is gone at once, as when its node is lost); they stay
        away until `restore` or the next trial. `restore` creates the zone's pods again
        and returns once they are ready: the EndpointSlices then route to them again."""
        spec, run = self.spec, self.objects.run
        if fault.restore is not None:
            zone = fault.restore.zone
            back = [i for i in sorted(self.held) if manifests.replica_zone(spec, i) == zone]
            for index in back:
                await self.objects.apply(manifests.target_pod(run, spec, index))
            await self.objects.ready(
                [names.target_pod_name(run.variant, i) for i in back],
                spec.target.startup_timeout,
            )
            self.held -= set(back)
            return [target_replica(i) for i in back]
        running = [i for i in range(spec.target.replicas) if i not in self.held]
        if fault.kill is not None:
            victims = running[len(running) - fault.kill.replicas :]
        elif fault.remove is not None:
            zone = fault.remove.zone
            victims = [i for i in running if manifests.replica_zone(spec, i) == zone]
        else:
            victims = []
        self.held |= set(victims)
        client = self.objects.client
        await asyncio.gather(
            *(
                client.delete(PODS, run.namespace, names.target_pod_name(run.variant, i), grace=0)
                for i in victims
            )
        )
        return [target_replica(i) for i in victims]

    def metrics(self) -> MetricsSource:
        objects = self.objects
        return run_metrics.run_source(objects.client, objects.run, self.spec, objects.options)
