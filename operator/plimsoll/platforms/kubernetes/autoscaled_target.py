"""A flight's target on a cluster (issue 57): started as a Deployment with its HPA
(`plimsoll.kube.autoscaled`), waited for at `minReplicas` ready pods, and watched
through the flight (`watched_hpa`). The load reaches it through the target Service, as
the Deployment's clients reach it: a pod the HPA adds takes the connections opened
once it is ready."""

from __future__ import annotations

from typing import Any

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.kube import autoscaled, manifests, names
from plimsoll.kube.wait import wait_selected_ready
from plimsoll.platforms.kubernetes.run_objects import RunObjects
from plimsoll.platforms.kubernetes.watched_hpa import WatchedHpa


async def start_autoscaled(objects: RunObjects, spec: CapacityTestSpec) -> list[dict[str, Any]]:
    """The Deployment, its HPA and the target Service; the pods once minReplicas serve."""
    run, apply = objects.run, objects.apply
    await apply(autoscaled.target_deployment(run, spec))
    await apply(autoscaled.target_hpa(run, spec))
    await apply(
        manifests.cluster_service(run, names.TARGET_SERVICE, names.ROLE_TARGET, spec.target.port)
    )
    return await autoscaled_ready(objects, spec, spec.target.startup_timeout)


async def autoscaled_ready(
    objects: RunObjects, spec: CapacityTestSpec, limit: float
) -> list[dict[str, Any]]:
    """The Deployment's ready pods, once at least minReplicas of them serve."""
    autoscaler = spec.target.autoscaler
    if autoscaler is None:
        raise ValueError("only a flight's target is a Deployment")
    run = objects.run
    return await wait_selected_ready(
        objects.client,
        run.namespace,
        run.selector(names.ROLE_TARGET),
        autoscaler.min_replicas,
        limit,
        objects.options.poll,
    )


def watched(objects: RunObjects) -> WatchedHpa:
    """The flight's Deployment and HPA, watched by the runner beside each trial."""
    run = objects.run
    return WatchedHpa(
        objects.client,
        run.namespace,
        autoscaled.deployment_name(run),
        run.selector(names.ROLE_TARGET),
    )
