"""A fault on Kubernetes deletes target pods with grace period 0: `kill` the last running
replicas, `remove` a zone's (by their zone label), each at most once until brought
back; against kmock's emulated API server (no kubelet: the real-API-server run in
tests/controller/test_apiserver_prove.py brings them back)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import kmock
import pytest

from plimsoll.api import load_capacity_test
from plimsoll.api.faults import Fault
from plimsoll.kube import manifests
from plimsoll.kube.client import PODS, KubeClient
from plimsoll.platforms.base import Endpoints
from plimsoll.platforms.kubernetes.run_objects import RunObjects
from plimsoll.platforms.kubernetes.started import KubernetesRun
from tests.api.test_spec_errors import MINIMAL
from tests.controller.fake_cluster import FakeCluster
from tests.platforms.kubernetes.test_variant_children import NS, identity, platform


@pytest.fixture
async def started() -> AsyncIterator[tuple[KubernetesRun, KubeClient, FakeCluster]]:
    shape = {"cpu": "250m", "memory": "64Mi"}
    target = {"image": "t:1", "resources": shape, "replicas": 4, "zones": ["a", "b", "c"]}
    spec = load_capacity_test({**MINIMAL, "spec": {**MINIMAL["spec"], "target": target}}).spec
    async with FakeCluster() as emulator, kmock.Server(emulator) as server:
        api = KubeClient(str(server.url))
        made = platform(api, "default")
        await made.apply(manifests.namespace(identity("default")))
        for index in range(4):
            await made.apply(manifests.target_pod(made.run, spec, index))
        # The started run as start() makes it, without a kubelet to make pods ready.
        pods = [{"metadata": {"name": f"target-{index}"}} for index in range(4)]
        objects = RunObjects(api, made.run, made._options)
        endpoints = Endpoints("http://target", "http://mock", [])
        try:
            yield KubernetesRun(objects, spec, pods, endpoints, generator_count=1), api, emulator
        finally:
            await api.aclose()


async def _names(api: KubeClient) -> list[str]:
    return sorted(p["metadata"]["name"] for p in await api.list(PODS, NS))


async def test_remove_deletes_the_zones_pods_at_once(
    started: tuple[KubernetesRun, KubeClient, FakeCluster],
) -> None:
    made, api, emulator = started
    taken = await made.fire(Fault.model_validate({"at": "3s", "remove": {"zone": "a"}}))
    assert taken == ["target", "target-3"]  # replicas 0 and 3 run in zone a
    assert await _names(api) == ["target-1", "target-2"]
    deletes = [(path, query) for method, path, query, _ in emulator.calls if method == "DELETE"]
    assert len(deletes) == 2
    assert all("gracePeriodSeconds=0" in query for _, query in deletes), deletes


async def test_kill_takes_the_last_running_replicas_and_never_one_twice(
    started: tuple[KubernetesRun, KubeClient, FakeCluster],
) -> None:
    made, api, _ = started
    kill = Fault.model_validate({"at": "3s", "kill": {"replicas": 1}})
    assert await made.fire(kill) == ["target-3"]
    assert await made.fire(kill) == ["target-2"]
    assert await made.fire(Fault.model_validate({"at": "4s", "remove": {"zone": "c"}})) == []
    assert await _names(api) == ["target", "target-1"]
