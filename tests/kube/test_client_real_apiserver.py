"""`KubeClient` across a real kube-apiserver outage: stopped for 10 s, started again.

The API server (and its etcd) of `../shared/k8s` is stopped while the client
patches a CapacityTest's status and creates a ConfigMap by name; it comes back
10 s later on the same port and data. Both writes must land exactly once, with
no error reaching the caller, as a run's status writes must during an API-server
restart. The client logs in as the operator does, through kopf's kubeconfig login.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import kopf
import pytest

from plimsoll.api.crd import render_crd
from plimsoll.kube.client import CAPACITY_TESTS, CONFIG_MAPS, KubeClient
from tests.api.test_bad_input import BASE
from tests.control_plane import ControlPlane
from tests.controller.control_plane import require_control_plane

pytestmark = pytest.mark.slow


@pytest.fixture
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    require_control_plane()  # a skip without ../shared/k8s; a failure under CI=true
    cluster = ControlPlane(tmp_path_factory.mktemp("k8s"))
    cluster.up()
    try:
        cluster.install_crd(render_crd())
        test = {**BASE, "metadata": {"name": "outage", "namespace": "default"}}
        created = cluster.kubectl("create", "-f", "-", stdin=json.dumps(test))
        assert created.returncode == 0, created.stderr
        yield cluster
    finally:
        cluster.down(wipe=True)


@pytest.fixture
async def client(plane: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[KubeClient]:
    monkeypatch.setenv("KUBECONFIG", plane.kubeconfig)
    info = kopf.login_with_kubeconfig(
        logger=logging.getLogger("test"), settings=kopf.OperatorSettings()
    )
    assert info is not None
    kube = KubeClient.from_connection(info)
    yield kube
    await kube.aclose()


def _config_map() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "outage-report", "namespace": "default"},
        "data": {"report.json": "{}"},
    }


async def test_writes_during_a_ten_second_api_server_outage_land_once(
    plane: ControlPlane, client: KubeClient
) -> None:
    assert await client.has_subresource(CAPACITY_TESTS, "status")
    await asyncio.to_thread(plane.down)  # etcd and kube-apiserver stop; the data stays

    async def come_back() -> None:
        await asyncio.sleep(10)
        await asyncio.to_thread(plane.up)

    back = asyncio.create_task(come_back())
    started = time.monotonic()
    status = {"status": {"phase": "Running", "stepCount": 7}}
    patched, created = await asyncio.gather(
        client.patch(CAPACITY_TESTS, "default", "outage", status, sub="status"),
        client.create(_config_map()),
    )
    await back
    assert time.monotonic() - started >= 10
    assert patched["status"]["stepCount"] == 7
    assert created["metadata"]["name"] == "outage-report"

    test = await client.get(CAPACITY_TESTS, "default", "outage")
    assert test is not None
    assert test["status"]["stepCount"] == 7
    maps = await client.list(CONFIG_MAPS, "default")
    assert [m["metadata"]["name"] for m in maps].count("outage-report") == 1
