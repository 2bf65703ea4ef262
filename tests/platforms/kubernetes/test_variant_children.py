"""Each variant's pods have names of their own; a variant adopts only its own, waits until the
previous variant's pods being deleted are gone, and names an object made for another variant,
against kmock's emulated API server."""

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
from plimsoll.platforms.kubernetes.options import KubernetesOptions
from plimsoll.platforms.kubernetes.platform import KubernetesPlatform
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


async def test_each_variant_has_its_own_target_and_adopts_only_its_own(
    client: KubeClient,
) -> None:
    second = platform(client, "b")
    await second.apply(manifests.namespace(identity("b")))  # the run's namespace: shared
    await platform(client, "a").apply(target("a"))  # variant a's target, kept (cleanup: Never)
    made = await second.apply(target("b"))  # created beside it under its own name, not adopted
    assert made["metadata"]["name"] == "target-b"
    pods = {p["metadata"]["name"]: p for p in await client.list(PODS, NS)}
    assert sorted(pods) == ["target-a", "target-b"]
    assert pods["target-a"]["metadata"]["labels"]["plimsoll.dev/variant"] == "a"
    adopted = await second.apply(target("b"))  # its own, on resume: adopted, not a conflict
    assert adopted["metadata"]["labels"]["plimsoll.dev/variant"] == "b"
    assert len(await client.list(PODS, NS)) == 2
    # An object of another variant under the same name is never adopted.
    with pytest.raises(PlatformError, match="made for variant 'a' of this run, not 'b'"):
        await second.apply(target("a"))


async def test_a_variant_waits_until_the_previous_variants_pods_are_gone(
    client: KubeClient,
) -> None:
    await leaving(client)
    await platform(client, "a").apply(
        {**target("a"), "metadata": {**target("a")["metadata"], "name": "kept-a"}}
    )  # not being deleted (cleanup: Never): not waited for

    async def kubelet_finishes() -> None:
        await asyncio.sleep(0.3)
        await client.patch(PODS, NS, "target-a", {"metadata": {"finalizers": None}})

    finishing = asyncio.create_task(kubelet_finishes())
    await platform(client, "b").wait_other_variants_gone(5)
    assert finishing.done()
    assert [p["metadata"]["name"] for p in await client.list(PODS, NS)] == ["kept-a"]


async def test_a_previous_variant_that_never_leaves_is_named(client: KubeClient) -> None:
    await leaving(client)
    with pytest.raises(PlatformError, match=r"pods target-a are still being deleted after 0\.2 s"):
        await platform(client, "b").wait_other_variants_gone(0.2)


async def leaving(client: KubeClient) -> None:
    """Variant a's target, deleted but held by a finalizer (a pod shutting down)."""
    pod = target("a")
    pod["metadata"]["finalizers"] = ["test.plimsoll.dev/terminating"]
    await client.create(pod)
    await client.delete(PODS, NS, "target-a")
    held = await client.get(PODS, NS, "target-a")
    assert held is not None
    assert held["metadata"].get("deletionTimestamp")


async def test_a_pod_still_being_deleted_is_waited_for_then_created_anew(
    client: KubeClient,
) -> None:
    await leaving(client)  # e.g. deleted by an interrupted attempt at the same variant

    async def kubelet_finishes() -> None:
        await asyncio.sleep(0.3)
        await client.patch(PODS, NS, "target-a", {"metadata": {"finalizers": None}})

    finishing = asyncio.create_task(kubelet_finishes())
    created = await platform(client, "a").apply(target("a"))
    await finishing
    assert not created["metadata"].get("deletionTimestamp")
    assert created["metadata"]["labels"]["plimsoll.dev/variant"] == "a"


async def test_a_deletion_that_never_ends_is_named(client: KubeClient) -> None:
    await leaving(client)
    slow = KubernetesPlatform(
        client, identity("a"), KubernetesOptions(ready_timeout=0.3, poll=0.05)
    )
    with pytest.raises(PlatformError, match=r"Pod target-a is still being deleted after 0\.3 s"):
        await slow.apply(target("a"))
