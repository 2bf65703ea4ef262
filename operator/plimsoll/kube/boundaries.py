"""A run namespace's ResourceQuota and LimitRange: a run uses no more than it declared.

Created by `plimsoll.platforms.kubernetes.platform` right after the namespace and its
RoleBinding, before any pod. The quota bounds the number of pods and the CPU and
memory they request, sized from the spec (`plimsoll.decide.run_budget`); the
LimitRange gives every container that declares nothing (the mock, a setup Job, a
target or service without `resources`) a small request, which the quota needs to
admit it.

Limits are not bounded, on purpose: a target or service without `resources` is
measured unpinned, and the mock must not be throttled, so neither gets a limit from
here. Pods whose spec gives `resources` are Guaranteed (requests == limits) anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import PodShape
from plimsoll.decide.run_budget import KnownShapes, run_budget
from plimsoll.kube.names import RunIdentity
from plimsoll.kube.pod_specs import cpu_quantity, memory_quantity

QUOTA_NAME = "run-budget"
LIMIT_RANGE_NAME = "run-defaults"
UNDECLARED = PodShape(cpu=0.1, memory=128 * 2**20)


def resource_quota(
    run: RunIdentity, every_variant: Sequence[CapacityTestSpec], shapes: KnownShapes
) -> dict[str, Any]:
    """The quota of the run's namespace: what every variant's spec (`variant_specs`) asks for."""
    budget = run_budget(every_variant, shapes)
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": QUOTA_NAME, "namespace": run.namespace, "labels": run.labels()},
        "spec": {
            "hard": {
                "pods": str(budget.pods),
                "requests.cpu": cpu_quantity(budget.cpu),
                "requests.memory": memory_quantity(budget.memory),
            }
        },
    }


def limit_range(run: RunIdentity) -> dict[str, Any]:
    request = {"cpu": cpu_quantity(UNDECLARED.cpu), "memory": memory_quantity(UNDECLARED.memory)}
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": LIMIT_RANGE_NAME, "namespace": run.namespace, "labels": run.labels()},
        # defaultRequest only: a `default` or `max` would also give limits (the API
        # server defaults `default` from `max`), pinning what is meant to run unpinned.
        "spec": {"limits": [{"type": "Container", "defaultRequest": request}]},
    }
