"""The test kubelet's Node: registered, Ready, and kept alive by a Lease heartbeat.

Without a Ready node the real scheduler binds nothing; without heartbeats the
controller manager marks the node unreachable after 50 s and taints it, which
would evict a long test's pods. Each test kubelet registers a node of its own
name and deletes it when it stops, so a later test's pods are never bound to a
node nobody plays.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime

import httpx

from tests.controller.admin_api import AdminApi, ApiError

LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
CAPACITY = {"cpu": "64", "memory": "256Gi", "pods": "250"}  # room for every test's pods


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def register(api: AdminApi, name: str, labels: dict[str, str] | None = None) -> None:
    """Register Node `name`, Ready; `labels` such as its zone
    (`topology.kubernetes.io/zone`), which a real kubelet takes from its cloud."""
    metadata = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
    await api.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": metadata})
    ready = {
        "type": "Ready",
        "status": "True",
        "reason": "KubeletReady",
        "message": "the operator tests' kubelet",
        "lastHeartbeatTime": now(),
        "lastTransitionTime": now(),
    }
    status = {
        "allocatable": CAPACITY,
        "capacity": CAPACITY,
        "conditions": [ready],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
    }
    await api.patch(f"/api/v1/nodes/{name}/status", {"status": status})
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": micro_now()},
    }
    await api.create(LEASE_PATH, lease)


async def heartbeat(api: AdminApi, name: str, every: float = 10.0) -> None:
    """Renew the node's Lease until cancelled (the controller manager reads its renewTime)."""
    while True:
        await asyncio.sleep(every)
        try:
            await api.patch(f"{LEASE_PATH}/{name}", {"spec": {"renewTime": micro_now()}})
        except (ApiError, httpx.HTTPError) as exc:  # a missed beat is retried, not fatal
            print(f"test kubelet: lease renewal failed: {exc!r}", file=sys.stderr)


async def unregister(api: AdminApi, name: str) -> None:
    await api.delete(f"{LEASE_PATH}/{name}")
    await api.delete(f"/api/v1/nodes/{name}")
