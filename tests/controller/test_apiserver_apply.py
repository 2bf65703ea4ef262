"""Server-side apply on the real API server: the same state written again writes nothing.

The operator writes what it owns (the report ConfigMap, the CapacityTest's status, the
run namespace's Pod Security labels) with server-side apply as field manager
`plimsoll`. Counted by resourceVersion, which the API server bumps on every write and
keeps on a no-op: a second reconcile of the same state leaves it as it was, and a
user's own fields on the object survive the operator's next write.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import kopf
import pytest

from plimsoll.api.report import RunReport
from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.controller.report_map import write_report_config_map
from plimsoll.controller.status import StatusWriter
from plimsoll.kube.client import CAPACITY_TESTS, CONFIG_MAPS, NAMESPACES, KubeClient
from tests.api.test_bad_input import BASE
from tests.controller.apiserver_fixtures import ApiServer
from tests.platforms.kubernetes.test_boundaries import spec

pytestmark = pytest.mark.slow


@pytest.fixture
async def client(
    apiserver: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[KubeClient]:
    monkeypatch.setenv("KUBECONFIG", str(apiserver.plane.kubeconfig))
    info = kopf.login_with_kubeconfig(
        logger=logging.getLogger("test"), settings=kopf.OperatorSettings()
    )
    assert info is not None
    kube = KubeClient.from_connection(info)
    yield kube
    await kube.aclose()


async def _capacity_test(apiserver: ApiServer, name: str) -> dict[str, Any]:
    body = copy.deepcopy(BASE)
    body["metadata"] = {"name": name}
    return await apiserver.apply(body)


def _version(obj: dict[str, Any] | None) -> str:
    assert obj is not None
    return str(obj["metadata"]["resourceVersion"])


def _report(name: str, started: datetime) -> RunReport:
    return RunReport(test_name=name, spec=spec(), started_at=started, platform="kubernetes")


async def test_the_report_written_again_writes_nothing_and_keeps_a_users_labels(
    apiserver: ApiServer, client: KubeClient
) -> None:
    owner = await _capacity_test(apiserver, "ssa-report")
    started = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    name = await write_report_config_map(client, owner, _report("ssa-report", started))
    first = await client.get(CONFIG_MAPS, apiserver.namespace, name)
    await write_report_config_map(client, owner, _report("ssa-report", started))
    again = await client.get(CONFIG_MAPS, apiserver.namespace, name)
    assert _version(again) == _version(first)  # the second write of the same report: none

    path = f"/api/v1/namespaces/{apiserver.namespace}/configmaps/{name}"
    await apiserver.api.patch(path, {"metadata": {"labels": {"team": "payments"}}})
    labelled = await client.get(CONFIG_MAPS, apiserver.namespace, name)
    later = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    await write_report_config_map(client, owner, _report("ssa-report", later))
    after = await client.get(CONFIG_MAPS, apiserver.namespace, name)
    assert after is not None
    assert first is not None
    assert _version(after) != _version(labelled)  # a new report is written
    assert after["data"]["report.json"] != first["data"]["report.json"]
    assert after["metadata"]["labels"]["team"] == "payments"  # the user's label survives
    managers = {(m["manager"], m["operation"]) for m in after["metadata"]["managedFields"]}
    assert ("plimsoll", "Apply") in managers


async def test_a_status_applied_again_writes_nothing(
    apiserver: ApiServer, client: KubeClient
) -> None:
    await _capacity_test(apiserver, "ssa-status")
    status = CapacityTestStatus(phase=Phase.RUNNING, message="step 1 of at most 12")
    writer = StatusWriter(client, apiserver.namespace, "ssa-status", status)
    writer.rewrite_all()
    assert await writer.write()
    first = await client.get(CAPACITY_TESTS, apiserver.namespace, "ssa-status")
    assert first is not None
    assert first["status"]["message"] == "step 1 of at most 12"

    # A second operator (a restart) reconciles the same state: it sends it all again.
    again = StatusWriter(client, apiserver.namespace, "ssa-status", status.model_copy())
    again.rewrite_all()
    assert await again.write()
    second = await client.get(CAPACITY_TESTS, apiserver.namespace, "ssa-status")
    assert _version(second) == _version(first)

    status.message = "step 2 of at most 12"
    assert await writer.write()
    third = await client.get(CAPACITY_TESTS, apiserver.namespace, "ssa-status")
    assert third is not None
    assert third["status"]["message"] == "step 2 of at most 12"
    assert _version(third) != _version(first)


async def test_a_namespace_label_applied_again_writes_nothing_and_keeps_others(
    apiserver: ApiServer, client: KubeClient
) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": apiserver.namespace,
            "labels": {"pod-security.kubernetes.io/enforce": "restricted"},
        },
    }
    await apiserver.api.patch(
        f"/api/v1/namespaces/{apiserver.namespace}", {"metadata": {"labels": {"owner": "me"}}}
    )
    await client.apply(body)
    first = await client.get(NAMESPACES, None, apiserver.namespace)
    await client.apply(body)
    second = await client.get(NAMESPACES, None, apiserver.namespace)
    assert _version(second) == _version(first)
    assert second is not None
    assert second["metadata"]["labels"]["owner"] == "me"
    assert second["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
