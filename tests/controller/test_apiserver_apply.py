"""Server-side apply on the real API server: the same state written again writes nothing.

The operator writes what it owns (the report ConfigMap, the CapacityTest's status, the
run namespace and its children) with server-side apply as field manager `plimsoll`.
Counted by resourceVersion, which the API server bumps on every write and keeps on a
no-op: a second reconcile of the same state leaves it as it was, a user's own fields on
the object survive the operator's next write, and a field of the operator's that
someone changed is put back.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import kopf
import pytest

from plimsoll.api.report import RunReport
from plimsoll.api.status import (
    CapacityTestStatus,
    ConditionStatus,
    ConditionType,
    Phase,
    Reason,
    carried_into_a_new_run,
)
from plimsoll.controller.report_map import write_report_config_map
from plimsoll.controller.status import StatusWriter
from plimsoll.kube import boundaries, manifests, names, network_policies, ownership
from plimsoll.kube.client import (
    CAPACITY_TESTS,
    CONFIG_MAPS,
    NAMESPACES,
    NETWORK_POLICIES,
    PODS,
    KubeClient,
    kind_of,
)
from plimsoll.kube.names import RunIdentity
from plimsoll.kube.wait import wait_quota_counted
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


def _rewriting(
    apiserver: ApiServer, client: KubeClient, name: str, status: CapacityTestStatus
) -> StatusWriter:
    """A status writer whose next write sends every field (a fresh operator's first)."""
    writer = StatusWriter(client, apiserver.namespace, name, status)
    writer.rewrite_all()
    return writer


async def _stored(apiserver: ApiServer, client: KubeClient, name: str) -> dict[str, Any]:
    found = await client.get(CAPACITY_TESTS, apiserver.namespace, name)
    assert found is not None
    return found


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
    writer = _rewriting(apiserver, client, "ssa-status", status)
    assert await writer.write()
    first = await _stored(apiserver, client, "ssa-status")
    assert first["status"]["message"] == "step 1 of at most 12"

    # A second operator (a restart) reconciles the same state: it sends it all again.
    again = _rewriting(apiserver, client, "ssa-status", status.model_copy())
    assert await again.write()
    second = await _stored(apiserver, client, "ssa-status")
    assert _version(second) == _version(first)

    status.message = "step 2 of at most 12"
    assert await writer.write()
    third = await _stored(apiserver, client, "ssa-status")
    assert third["status"]["message"] == "step 2 of at most 12"
    assert _version(third) != _version(first)


async def test_a_new_run_clears_the_last_runs_proved_condition(
    apiserver: ApiServer, client: KubeClient
) -> None:
    await _capacity_test(apiserver, "ssa-proof")
    proved = CapacityTestStatus(phase=Phase.SUCCEEDED, message="it held.")
    writer = _rewriting(apiserver, client, "ssa-proof", proved)
    writer.condition(ConditionType.PROVED, ConditionStatus.TRUE, Reason.HELD, "it held.")
    assert await writer.write()
    first = await _stored(apiserver, client, "ssa-proof")
    assert "Proved" in {c["type"] for c in first["status"]["conditions"]}

    # The spec changes to a plain search: the new run starts as the supervisor starts it.
    fresh = CapacityTestStatus(
        phase=Phase.PENDING, conditions=carried_into_a_new_run(proved.conditions)
    )
    again = _rewriting(apiserver, client, "ssa-proof", fresh)
    again.set_phase(Phase.PENDING, "new run")
    assert await again.write()
    after = await _stored(apiserver, client, "ssa-proof")
    assert "Proved" not in {c["type"] for c in after["status"]["conditions"]}
    assert after["status"]["phase"] == "Pending"


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


def _run(apiserver: ApiServer) -> RunIdentity:
    return RunIdentity(
        namespace=f"plimsoll-ssa-{apiserver.namespace}",
        run_id=apiserver.namespace[2:],
        owner_uid=f"uid-{apiserver.namespace}",
        owner_name="ssa",
        owner_namespace=apiserver.namespace,
    )


def _children(run: RunIdentity) -> list[dict[str, Any]]:
    """What the Kubernetes platform writes into a run's namespace, the target included."""
    plain = spec()
    return [
        manifests.namespace(run),
        boundaries.limit_range(run),
        boundaries.resource_quota(run, [plain], manifests.KNOWN_SHAPES),
        network_policies.run_egress_policy(run),
        network_policies.run_ingress_policy(run),
        network_policies.generator_network_policy(run, plain),
        manifests.mock_config_map(run, plain.upstream),
        manifests.cluster_service(run, names.MOCK_SERVICE, names.ROLE_MOCK, plain.upstream.port),
        manifests.control_token_secret(run, "t0ken"),
        manifests.target_pod(run, plain),
    ]


async def _apply_all(
    client: KubeClient, run: RunIdentity, bodies: list[dict[str, Any]]
) -> dict[str, str]:
    """Each body applied in turn (as one reconcile does); the resourceVersion of each."""
    written = {}
    for body in bodies:
        answer = await ownership.apply_owned(client, run, body, limit=10, poll=0.1)
        written[f"{body['kind']}/{body['metadata']['name']}"] = _version(answer)
        if body["kind"] == "ResourceQuota":  # the API server refuses pods until it is counted
            await wait_quota_counted(client, run.namespace, answer, 30, 0.1)
    return written


async def _versions_now(
    client: KubeClient, run: RunIdentity, bodies: list[dict[str, Any]]
) -> dict[str, str]:
    versions = {}
    for body in bodies:
        namespace = body["metadata"].get("namespace")
        obj = await client.get(kind_of(body), namespace, body["metadata"]["name"])
        versions[f"{body['kind']}/{body['metadata']['name']}"] = _version(obj)
    return versions


async def _settled(client: KubeClient, run: RunIdentity) -> None:
    """Until the controllers' own writes are done: the quota counted (above) and the
    target's unschedulable condition set (there is no node)."""
    for _ in range(100):
        pod = await client.get(PODS, run.namespace, names.target_pod_name(run.variant))
        if pod and (pod.get("status") or {}).get("conditions"):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the scheduler never looked at the target pod")


async def test_a_runs_children_applied_again_write_nothing(
    apiserver: ApiServer, client: KubeClient
) -> None:
    run = _run(apiserver)
    bodies = _children(run)
    await _apply_all(client, run, bodies)
    await _settled(client, run)
    before = await _versions_now(client, run, bodies)
    # A second reconcile of the same state (an operator restarted mid-run): no writes.
    again = await _apply_all(client, run, bodies)
    assert again == before
    assert await _versions_now(client, run, bodies) == before
    assert len(before) == len(bodies) == 10
    namespace = await client.get(NAMESPACES, None, run.namespace)
    assert namespace is not None
    managers = {(m["manager"], m["operation"]) for m in namespace["metadata"]["managedFields"]}
    assert ("plimsoll", "Apply") in managers


async def test_an_adopted_policy_is_put_back_and_a_users_label_survives(
    apiserver: ApiServer, client: KubeClient
) -> None:
    run = _run(apiserver)
    bodies = _children(run)[:4]  # the namespace, its bounds and the run's egress policy
    await _apply_all(client, run, bodies)
    path = f"/apis/networking.k8s.io/v1/namespaces/{run.namespace}/networkpolicies/run-egress"
    ours = await apiserver.api.get(path)
    assert ours is not None
    # Someone widens the policy to all egress and labels it for their own bookkeeping.
    await apiserver.api.patch(path, {"metadata": {"labels": {"team": "payments"}}})
    await apiserver.api.patch(path, {"spec": {"egress": [{}]}})
    widened = await apiserver.api.get(path)
    assert widened is not None
    assert widened["spec"]["egress"] == [{}]
    await _apply_all(client, run, bodies)  # the next reconcile
    after = await client.get(NETWORK_POLICIES, run.namespace, "run-egress")
    assert after is not None
    assert after["spec"] == ours["spec"]  # the operator's egress rules are back
    assert after["metadata"]["labels"]["team"] == "payments"  # the user's label survives


async def test_another_runs_object_is_refused_and_left_as_it_was(
    apiserver: ApiServer, client: KubeClient
) -> None:
    run = _run(apiserver)
    await _apply_all(client, run, _children(run)[:3])
    mock_config = manifests.mock_config_map(run, spec().upstream)
    name = mock_config["metadata"]["name"]
    theirs = {
        "metadata": {"name": name, "labels": {"app": "someone-else"}},
        "data": {"upstream.json": "{}"},
    }
    await apiserver.api.create(f"/api/v1/namespaces/{run.namespace}/configmaps", theirs)
    with pytest.raises(ownership.OwnershipError, match="belongs to another run"):
        await ownership.apply_owned(client, run, mock_config, limit=5, poll=0.1)
    kept = await client.get(CONFIG_MAPS, run.namespace, name)
    assert kept is not None
    assert kept["data"] == {"upstream.json": "{}"}
    assert kept["metadata"]["labels"] == {"app": "someone-else"}
