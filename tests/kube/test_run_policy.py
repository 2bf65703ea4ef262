"""The cluster's policy on a spec (`plimsoll.kube.run_policy`): with the operator's images
known, a generator or mock image it does not run is refused, and replay, not built on
Kubernetes, is refused too, each naming its field, before anything is created."""

from __future__ import annotations

import copy
from typing import Any

from plimsoll.api import load_capacity_test
from plimsoll.api.resource import CapacityTest
from plimsoll.kube.names import Images
from plimsoll.kube.run_policy import ClusterPolicy, policy_problems
from tests.api.test_spec_errors import MINIMAL


def _test(**spec: Any) -> CapacityTest:
    document = copy.deepcopy(MINIMAL)
    document["spec"].update(spec)
    return load_capacity_test(document)


def test_an_image_the_operator_does_not_run_is_refused_where_its_images_are_known() -> None:
    test = _test(generators={"image": "someone/else:1"}, upstream={"image": "mine/mock:2"})
    problems = policy_problems(test, ClusterPolicy(images=Images()))
    assert [p.split(":")[0] for p in problems] == ["spec.generators.image", "spec.upstream.image"]
    assert "PLIMSOLL_ALLOWED_IMAGES (Helm: allowedImages)" in problems[0]
    allowed = Images(allowed=frozenset({"someone/else:1", "mine/mock:2"}))
    assert policy_problems(test, ClusterPolicy(images=allowed)) == []
    # `plimsoll validate` from the chart's values knows no images: the operator checks them.
    assert policy_problems(test, ClusterPolicy()) == []


def test_replay_is_refused_on_kubernetes_naming_the_local_platform() -> None:
    test = _test(
        workload={
            "model": "replay",
            "mix": [{"name": "get", "path": "/"}],
            "replay": {"log": "/var/log/access.json"},
        }
    )
    [problem] = policy_problems(test, ClusterPolicy())
    assert problem.startswith("workload.model 'replay' is not built yet on Kubernetes")
    assert "plimsoll run" in problem
    assert policy_problems(_test(), ClusterPolicy(images=Images())) == []


def _flight(target: dict[str, object]) -> CapacityTest:
    return _test(
        target={
            "portEnv": "PORT",
            "resources": {"cpu": "250m", "memory": "128Mi"},
            "autoscaler": {"maxReplicas": 4, "targetCpuUtilization": 60},
            **target,
        },
        workload={
            "model": "rate",
            "mix": [{"name": "get", "path": "/"}],
            "profile": [{"level": 10, "hold": "10s"}, {"level": 40, "hold": "20s"}],
        },
        search={"strategy": "autoscale"},
        autoscale={"perPod": 25},
        passWhen={"latency": [{"quantile": "p99", "below": "300ms"}]},
    )


def test_an_autoscaler_flight_of_an_image_runs_on_kubernetes() -> None:
    flight = _flight({"image": "t:1", "command": ["python", "app.py"]})
    assert policy_problems(flight, ClusterPolicy()) == []


def test_flying_the_hpa_of_a_from_deployment_target_is_refused_as_not_built() -> None:
    test = _flight({"fromDeployment": {"name": "api"}})
    [problem] = policy_problems(test, ClusterPolicy())
    assert problem.startswith("target.autoscaler with target.fromDeployment: flying the HPA")
    assert "give target.image" in problem
