"""One CapacityTest nested too deep for Python's `json` cannot stop the operator.

On the real API server: a `podTemplate` nested 1,100 levels is refused at admission,
whatever the client (the CRD types every allow-listed field, `api/pod_template_schema.py`);
and a CapacityTest that still reaches the operator nested that deep (here through
`metadata.managedFields`, which any client may write and no CRD schema covers) is
skipped, named in the log and in an Event, while a test in another namespace is
served. Before, kopf's watcher failed on its initial list (RecursionError) and the
operator exited, again on every restart. The real `plimsoll operator` runs as the
chart's ServiceAccount. The deep object is deleted with kubectl (Go decodes it):
the tests' own client is Python too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.controller.admin_api import ApiError, wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, quickstart

pytestmark = pytest.mark.slow

LEVELS = 1100


def _dumps(value: Any) -> str:
    """JSON of any depth (Python's encoder recurses too): the nested part spliced in."""
    marker = "__DEEP__"
    text = json.dumps(value)
    deep = '{"a": ' * LEVELS + "{}" + "}" * LEVELS
    return text.replace(json.dumps(marker), deep)


def test_a_1100_level_pod_template_is_refused_by_kubectl_naming_the_field(
    apiserver: ApiServer,
) -> None:
    body = quickstart("deep-template", None)
    body["metadata"]["namespace"] = apiserver.namespace
    body["spec"]["target"]["podTemplate"] = {"spec": "__DEEP__"}
    result = apiserver.plane.kubectl("apply", "-f", "-", stdin=_dumps(body), check=False)
    assert result.returncode != 0, "the API server accepted a 1,100-level podTemplate"
    assert "spec.target.podTemplate.spec" in result.stderr, result.stderr


@pytest.mark.parametrize(
    "template",
    [
        {"spec": {"nodeSelector": {"zone": "__DEEP__"}}},
        {"metadata": {"labels": {"team": "__DEEP__"}}},
        {"spec": {"containers": [{"name": "target", "env": "__DEEP__"}]}},
    ],
    ids=["node-selector", "labels", "env"],
)
async def test_a_1100_level_pod_template_is_refused_without_field_validation(
    apiserver: ApiServer, template: dict[str, Any]
) -> None:
    """A client that asks for no field validation: an unknown field would be pruned, so
    the deep value sits where the schema wants a string or a list, and is refused."""
    body = quickstart("deep-typed", None)
    body["metadata"]["namespace"] = apiserver.namespace
    body["spec"]["target"]["podTemplate"] = template
    with pytest.raises(ApiError) as refused:
        await apiserver.api.call(
            "POST",
            apiserver.path(),
            content=_dumps(body),
            headers={"Content-Type": "application/json"},
        )
    assert refused.value.code == 422, refused.value
    assert "spec.target.podTemplate" in refused.value.message


def _deep_managed_fields() -> list[dict[str, Any]]:
    fields: dict[str, Any] = {}
    for _ in range(LEVELS):
        fields = {"f:a": fields}
    return [
        {
            "manager": "tenant",
            "operation": "Update",
            "apiVersion": "plimsoll.dev/v1alpha1",
            "time": "2026-12-06T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": "__FIELDS__"}},
        }
    ]


def _create_deep(apiserver: ApiServer) -> None:
    body = quickstart("deep", None)
    body["metadata"]["namespace"] = apiserver.namespace
    body["metadata"]["labels"] = {"a": "b"}
    body["metadata"]["managedFields"] = _deep_managed_fields()
    deep = '{"f:a": ' * LEVELS + "{}" + "}" * LEVELS
    text = json.dumps(body).replace(json.dumps("__FIELDS__"), deep)
    apiserver.plane.kubectl("create", "-f", "-", stdin=text)
    stored = apiserver.plane.kubectl(
        "get", "capacitytest", "deep", "-n", apiserver.namespace, "-o", "json",
        "--show-managed-fields",
    ).stdout  # fmt: skip
    with pytest.raises(RecursionError):  # what kopf's decoder met
        json.loads(stored)


async def test_the_operator_skips_an_undecodable_test_and_serves_another_namespace(
    apiserver: ApiServer, sa_operator: OperatorProcess
) -> None:
    other = f"{apiserver.namespace}-b"
    await apiserver.api.create("/api/v1/namespaces", {"metadata": {"name": other}})
    try:
        _create_deep(apiserver)
        sa_operator.start()
        await apiserver.apply(quickstart("harmless", None), namespace=other)
        status = await wait_for(lambda: apiserver.status("harmless", other), 90, "a status")
        assert status.get("phase"), status
        assert sa_operator.process is not None
        assert sa_operator.process.poll() is None, sa_operator.log()
        log = sa_operator.log()
        assert f"CapacityTest {apiserver.namespace}/deep" in log, log
        assert "maximum recursion depth" not in log, log

        async def undecodable() -> list[dict[str, Any]]:
            path = f"/api/v1/namespaces/{apiserver.namespace}/events"
            return [
                e for e in await apiserver.api.items(path) if e["reason"] == "UndecodableObject"
            ]

        skipped = await wait_for(undecodable, 30, "the UndecodableObject Event")
        assert skipped[0]["involvedObject"]["name"] == "deep"
        assert f"{apiserver.namespace}/deep" in skipped[0]["message"]
    finally:
        sa_operator.kill()
        apiserver.plane.kubectl(
            "delete", "capacitytest", "deep", "-n", apiserver.namespace, "--timeout=20s"
        )
        await apiserver.remove_all(namespace=other, limit=0)
        await apiserver.api.delete(f"/api/v1/namespaces/{other}")
