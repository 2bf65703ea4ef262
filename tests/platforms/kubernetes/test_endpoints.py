"""How the runner reaches a started run on Kubernetes, from the pods as the API server
returned them: a pod IP (bracketed when IPv6), the replicas' Service, or an existing
service; where each pod landed, and a pod sharing the target's node said."""

from __future__ import annotations

import copy
from typing import Any

from plimsoll.api import load_capacity_test
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.kube import names
from plimsoll.kube.control_ingress import OPEN_CONTROL_WARNING
from plimsoll.platforms.kubernetes.endpoints import host_literal, run_endpoints
from tests.api.test_spec_errors import MINIMAL
from tests.platforms.kubernetes.test_variant_children import identity

RUN = identity("default")


def _spec(**target: Any) -> CapacityTestSpec:
    document = copy.deepcopy(MINIMAL)
    pod = {"image": "t:1", "resources": {"cpu": "1", "memory": "64Mi"}}
    document["spec"]["target"] = target if "url" in target else {**pod, **target}
    return load_capacity_test(document).spec


def _pod(name: str, ip: str, node: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"nodeName": node}, "status": {"podIP": ip}}


def _endpoints(spec: CapacityTestSpec, targets: list[dict[str, Any]], **kwargs: Any) -> Any:
    mock = _pod("mock-0", "10.0.0.2", "node-b")
    generators = {"generator-0": _pod("generator-0", "10.0.0.3", "node-a")}
    options: dict[str, Any] = {
        "open_control": False,
        "api_hosts": {"10.96.0.1"},
        "allowed_target_hosts": frozenset(),
        "faults": None,
        **kwargs,
    }
    return run_endpoints(spec, RUN, targets, mock, generators, ["http://g"], **options)


def test_one_replica_is_reached_by_its_pod_ip_and_a_shared_node_is_said() -> None:
    spec = _spec()
    endpoints = _endpoints(spec, [_pod("target-0", "10.0.0.1", "node-a")])
    assert endpoints.target_url == f"http://10.0.0.1:{spec.target.port}"
    assert endpoints.upstream_url == f"http://10.0.0.2:{spec.upstream.port}"
    assert endpoints.placement[0] == "target-0 on node-a (10.0.0.1)"
    assert endpoints.warnings == ["generator-0 shares node node-a with the target"]


def test_an_ipv6_pod_is_bracketed() -> None:
    assert host_literal("fd00::5") == "[fd00::5]"
    assert host_literal("10.0.0.5") == "10.0.0.5"
    spec = _spec()
    endpoints = _endpoints(spec, [_pod("target-0", "fd00::5", "node-c")])
    assert endpoints.target_url == f"http://[fd00::5]:{spec.target.port}"


def test_several_replicas_are_reached_through_their_service() -> None:
    spec = _spec(replicas=2)
    pods = [_pod("target-0", "10.0.0.1", "node-c"), _pod("target-1", "10.0.0.4", "node-d")]
    endpoints = _endpoints(spec, pods)
    service = f"{RUN.child(names.TARGET_SERVICE)}.{RUN.namespace}.svc"
    assert endpoints.target_url == f"http://{service}:{spec.target.port}"


def test_an_existing_service_is_not_started_and_an_open_control_api_is_warned() -> None:
    spec = _spec(url="http://api.example.internal:8080/")
    endpoints = _endpoints(spec, [], open_control=True, faults=object())
    assert endpoints.target_url == "http://api.example.internal:8080"
    assert endpoints.placement[0].startswith("target: existing service at http://api.example")
    assert OPEN_CONTROL_WARNING in endpoints.warnings
    assert endpoints.faults is None  # no pods of ours to take away
