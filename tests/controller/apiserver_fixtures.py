"""Fixtures for the operator tests against the real API server (imported by conftest.py).

`control_plane` (one per session) starts the real control plane, applies the
generated CRD and kopf's peering CRDs, and installs the chart's ServiceAccounts,
RBAC and peering objects exactly as `helm install` renders them, twice: release
`plimsoll` watching every namespace and release `plimsoll-ns` watching only
`team-a` and `team-b`. The operator
under test logs in with a TokenRequest token of one of those ServiceAccounts,
so every call it makes is authorized by the chart's rules and nothing else.
Each test gets its own namespace (`apiserver`), its own Node played by the test
kubelet (`node_kubelet`), and the real `plimsoll operator` as a process
(`sa_operator`, cluster-wide; `start_namespaced` for the other release).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.controller.events import COMPONENT
from plimsoll.kube.names import LABEL_OWNER_UID
from tests.charts.helm import objects
from tests.controller import control_plane
from tests.controller.admin_api import CT_PATH, AdminApi
from tests.controller.control_plane import ControlPlane
from tests.controller.real_kubelet import RealKubelet
from tests.hostshare import alone_on_host
from tests.localrun import ROOT

RELEASE_NAMESPACE = "plimsoll-system"
RELEASES = {  # release name -> chart values
    "plimsoll": {},
    "plimsoll-ns": {"watch": {"scope": "namespaced", "namespaces": ["team-a", "team-b"]}},
}
IDENTITY_ENV = {
    "PLIMSOLL_SERVICE_ACCOUNT",
    "PLIMSOLL_SERVICE_ACCOUNT_NAMESPACE",
    "PLIMSOLL_RUN_ROLE",
    "PLIMSOLL_REPORT_ROLE",
    "PLIMSOLL_REFERENCES_ROLE",
    "PLIMSOLL_CONTRACT_ROLE",
    "PLIMSOLL_OPERATOR_NAMESPACE",
    "PLIMSOLL_OPERATOR_POD_LABELS",
}
RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
PEERING_KINDS = {"ClusterKopfPeering", "KopfPeering"}  # what `--peering` joins


@dataclass
class Installed:
    plane: ControlPlane
    kubeconfigs: dict[str, Path]  # release -> a kubeconfig of its ServiceAccount
    # release -> the PLIMSOLL_* variables its Deployment sets (who the operator is,
    # which roles it binds), so the operator under test runs as the chart runs it
    envs: dict[str, dict[str, str]]


def install_chart(plane: ControlPlane, folder: Path) -> Installed:
    plane.kubectl("apply", "--server-side", "-f", str(ROOT / "crds" / "capacitytest.yaml"))
    peering_crds = ROOT / "charts" / "plimsoll" / "crds" / "kopf-peering.yaml"
    plane.kubectl("apply", "--server-side", "-f", str(peering_crds))
    for namespace in (RELEASE_NAMESPACE, "team-a", "team-b"):
        plane.kubectl("create", "namespace", namespace)
    plane.wait_established("clusterkopfpeerings.kopf.dev", "kopfpeerings.kopf.dev")
    kubeconfigs, envs = {}, {}
    for release, values in RELEASES.items():
        rendered = objects(values, name=release)
        rbac = [o for o in rendered if o["kind"] in RBAC_KINDS | PEERING_KINDS]
        deployment = next(o for o in rendered if o["kind"] == "Deployment")
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        envs[release] = {
            e["name"]: e["value"]
            for e in container["env"]
            if e["name"] in IDENTITY_ENV and e.get("value")
        }
        plane.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(rbac))
        account = next(o for o in rbac if o["kind"] == "ServiceAccount")["metadata"]["name"]
        kubeconfigs[release] = plane.token_kubeconfig(
            folder / f"{release}.kubeconfig", RELEASE_NAMESPACE, account
        )
    plane.wait_established("capacitytests.plimsoll.dev")
    return Installed(plane, kubeconfigs, envs)


@pytest.fixture(scope="session")
def control_plane_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    control_plane.require_control_plane()
    folder = tmp_path_factory.mktemp("k8s")
    with alone_on_host(tmp_path_factory):  # a cold start takes both cores for ~16 s
        plane = control_plane.start(folder / "cluster")
    try:
        yield install_chart(plane, folder)
    finally:
        control_plane.stop(plane)


@dataclass
class ApiServer:
    """One test's view of the real API server: its namespace and the admin's client."""

    installed: Installed
    api: AdminApi
    namespace: str

    @property
    def plane(self) -> ControlPlane:
        return self.installed.plane

    def path(self, name: str = "", namespace: str | None = None) -> str:
        base = CT_PATH.format(ns=namespace or self.namespace)
        return f"{base}/{name}" if name else base

    async def apply(self, body: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        body["metadata"]["namespace"] = namespace or self.namespace
        return await self.api.create(self.path(namespace=namespace), body)

    async def get(self, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return await self.api.get(self.path(name, namespace))

    async def status(self, name: str, namespace: str | None = None) -> dict[str, Any]:
        return dict(((await self.get(name, namespace)) or {}).get("status") or {})

    async def phase_in(self, name: str, *phases: str, namespace: str | None = None) -> Any:
        """The status once its phase is one of `phases`, else None (for `wait_for`)."""
        status = await self.status(name, namespace)
        return status if status.get("phase") in phases else None

    async def events(self, name: str) -> list[dict[str, Any]]:
        """Plimsoll's events about one CapacityTest, oldest first (kopf posts its own too)."""
        items = await self.api.items(f"/api/v1/namespaces/{self.namespace}/events")
        ours = [
            e
            for e in items
            if e["involvedObject"]["name"] == name and e["source"].get("component") == COMPONENT
        ]
        return sorted(ours, key=lambda e: e["eventTime"])

    async def remove_all(self, namespace: str | None = None, limit: float = 60.0) -> None:
        """Delete every CapacityTest in the namespace and wait for them to go (their
        finalizer needs a running operator); past `limit`, drop the finalizers, so a
        later test's cluster-wide operator does not pick up a leftover."""
        path = self.path(namespace=namespace)
        for item in await self.api.items(path):
            await self.api.delete(f"{path}/{item['metadata']['name']}")
        deadline = asyncio.get_running_loop().time() + limit
        while await self.api.items(path):
            if asyncio.get_running_loop().time() > deadline:
                for item in await self.api.items(path):
                    name = item["metadata"]["name"]
                    await self.api.patch(f"{path}/{name}", {"metadata": {"finalizers": None}})
                return
            await asyncio.sleep(0.25)

    async def abandon(self) -> None:
        """After a test, with its operator stopped: its CapacityTests go without their
        finalizer and its run namespaces are deleted unawaited (the controller manager
        finishes them in the background). The finalizer's own path is a test of its own."""
        await self.remove_all(limit=0)
        for run in await self.api.items("/api/v1/namespaces", labelSelector=LABEL_OWNER_UID):
            await self.api.delete(f"/api/v1/namespaces/{run['metadata']['name']}")

    async def namespace_gone(self, name: str) -> bool:
        return await self.api.get(f"/api/v1/namespaces/{name}") is None


@pytest.fixture
async def apiserver(control_plane_installed: Installed) -> AsyncIterator[ApiServer]:
    api = AdminApi(control_plane_installed.plane)
    namespace = f"t-{uuid.uuid4().hex[:8]}"
    await api.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
    server = ApiServer(control_plane_installed, api, namespace)
    try:
        yield server
    finally:
        await server.abandon()
        await api.delete(f"/api/v1/namespaces/{namespace}")
        await api.aclose()


@pytest.fixture
async def node_kubelet(apiserver: ApiServer, tmp_path: Path) -> AsyncIterator[RealKubelet]:
    workdir = tmp_path / "kubelet"
    workdir.mkdir()
    kubelet = RealKubelet(apiserver.api, workdir)
    await kubelet.start()
    try:
        yield kubelet
    finally:
        await kubelet.stop()
