"""A flight's target on a cluster (issue 57): a Deployment of the target's pod and the
HorizontalPodAutoscaler over it, both in the run's namespace, so the cluster's own HPA
controller does the scaling.

The rest of a run is bare Pods (`manifests`' docstring says why); a flight needs a
controller that makes pods, since making them is what is measured. The Deployment's
pods are the target pod of `manifests.target_pod` (its shape pinned, the restricted
security contexts, no API token), labelled as the run's target, so the target Service
and the run's NetworkPolicies pick them as they pick a bare replica. Pure functions:
`tests/kube` validates both against Kubernetes' own schemas.
"""

from __future__ import annotations

from typing import Any

from plimsoll.api.autoscale import Autoscaler, hpa_spec
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.kube import manifests, names
from plimsoll.kube.names import RunIdentity


def deployment_name(run: RunIdentity) -> str:
    """The flight's Deployment, and its HPA: named as the target's first replica would be."""
    return names.target_pod_name(run.variant, 0)


def target_deployment(run: RunIdentity, spec: CapacityTestSpec) -> dict[str, Any]:
    """The target as a Deployment of `minReplicas` pods; the HPA sets the count from then."""
    autoscaler = _autoscaler(spec)
    pod = manifests.target_pod(run, spec, 0)
    labels = pod["metadata"]["labels"]
    name = deployment_name(run)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": manifests.meta(run, name, names.ROLE_TARGET),
        "spec": {
            "replicas": autoscaler.min_replicas,
            "selector": {"matchLabels": run.selector(names.ROLE_TARGET)},
            # A pod lost mid-flight is made again, as in production: the flight measures
            # the autoscaler with its Deployment, and counts what the loss cost.
            "template": {
                "metadata": {
                    "labels": labels,
                    **({"annotations": a} if (a := pod["metadata"].get("annotations")) else {}),
                },
                "spec": pod["spec"],
            },
        },
    }


def target_hpa(run: RunIdentity, spec: CapacityTestSpec) -> dict[str, Any]:
    """autoscaling/v2's HPA as `target.autoscaler` writes it, over the flight's Deployment."""
    name = deployment_name(run)
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": manifests.meta(run, name, names.ROLE_TARGET),
        "spec": hpa_spec(_autoscaler(spec), name),
    }


def _autoscaler(spec: CapacityTestSpec) -> Autoscaler:
    autoscaler = spec.target.autoscaler
    if autoscaler is None:
        raise ValueError("a Deployment and HPA are made only for target.autoscaler")
    return autoscaler
