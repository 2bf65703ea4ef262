"""A variant adopts only its own pods, waits out the previous variant's deletion, and names
what another variant left behind, against kmock's emulated API server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import kmock
import pytest

from plimsoll.api import load_capacity_test
from plimsoll.kube import manifests
from plimsoll.kube.client import PODS, KubeClient
from plimsoll.kube.names import RunIdentity
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.kubernetes.platform import KubernetesOptions, KubernetesPlatform
from tests.api.test_spec_errors import MINIMAL
from tests.controller.fake_cluster import FakeCluster

NS = "plimsoll-quick-r1"


def identity(variant: str) -> RunIdentity:
    return RunIdentity(
        namespace=NS,
        run_id="r1",
        owner_uid="u-1",
        owner_name="quick",
        owner_namespace="default",
        variant=variant,
    )


def platform(client: KubeClient, variant: str) -> KubernetesPlatform:
    return KubernetesPlatform(
        client, identity(variant), KubernetesOptions(ready_timeout=5, poll=0.05)
    )


def target(variant: str) -> dict[str, Any]:
    shape = {"cpu": "1", "memory": "64Mi"}
    document = {
        **MINIMAL,
        "spec": {**MINIMAL["spec"], "target": {"image": "t:1", "resources": shape}},
    }
    return manifests.target_pod(identity(variant), load_capacity_test(document).spec)


@pytest.fixture
async def client() -> AsyncIterator[KubeClient]:
    async with FakeCluster() as emulator, kmock.Server(emulator) as server:
        api = KubeClient(str(server.url))
        await platform(api, "a").apply(manifests.namespace(identity("a")))
        try:
            yield api
        finally:
            await api.aclose()


async def test_the_namespace_is_shared_but_a_pod_of_another_variant_is_not_adopted(
    client: KubeClient,
) -> None:
    second = platform(client, "b")
    await second.apply(manifests.namespace(identity("b")))  # the run's namespace: shared
    await platform(client, "a").apply(target("a"))  # variant a's target, kept (cleanup: Never)
    with pytest.raises(PlatformError, match="left by variant 'a' of this run"):
        await second.apply(target("b"))
    adopted = await platform(client, "a").apply(target("a"))  # its own: adopted on resume
    assert adopted["metadata"]["labels"]["plimsoll.dev/variant"] == "a"


async def leaving(client: KubeClient) -> None:
    """Variant a's target, deleted but held by a finalizer (a pod shutting down)."""
    pod = target("a")
    pod["metadata"]["finalizers"] = ["test.plimsoll.dev/terminating"]
    await client.create(pod)
    await client.delete(PODS, NS, "target")
    held = await client.get(PODS, NS, "target")
    assert held is not None
    assert held["metadata"].get("deletionTimestamp")


async def test_a_pod_still_being_deleted_is_waited_for_then_created_anew(
    client: KubeClient,
) -> None:
    await leaving(client)

    async def kubelet_finishes() -> None:
        await asyncio.sleep(0.3)
        await client.patch(PODS, NS, "target", {"metadata": {"finalizers": None}})

    finishing = asyncio.create_task(kubelet_finishes())
    created = await platform(client, "b").apply(target("b"))
    await finishing
    assert created["metadata"]["labels"]["plimsoll.dev/variant"] == "b"


async def test_a_deletion_that_never_ends_is_named(client: KubeClient) -> None:
    await leaving(client)
    slow = KubernetesPlatform(
        client, identity("b"), KubernetesOptions(ready_timeout=0.3, poll=0.05)
    )
    with pytest.raises(PlatformError, match=r"Pod target is still being deleted after 0\.3 s"):
        await slow.apply(target("b"))
