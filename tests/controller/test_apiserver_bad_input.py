"""Specs the models refuse, on the real API server and operator.

`podTemplate` was a free-form object in the CRD, so a `containers: 5` or an `env: 5`
reached the operator (the `TypeError` escaped its daemon and kopf retried it forever
with no condition written). The CRD now types every allow-listed field
(`api/pod_template_schema.py`): the API server refuses each at admission, naming the
field (the model still refuses them for `plimsoll validate`, `tests/api/test_pod_template.py`).
A cron that never fires (30 February) passes the CRD, then used to crash-loop the
daemon in `get_prev` after the first run: it must end in `SpecValid=False` naming the
field, once, with nothing started. The real `plimsoll operator` runs as the chart's
ServiceAccount.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.controller.admin_api import ApiError, wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, quickstart

pytestmark = pytest.mark.slow

TEMPLATE = "spec.target.podTemplate.spec"
CASES: dict[str, tuple[dict[str, Any], str]] = {
    "containers-5": ({"podTemplate": {"spec": {"containers": 5}}}, f"{TEMPLATE}.containers"),
    "env-5": (
        {"podTemplate": {"spec": {"containers": [{"name": "target", "env": 5}]}}},
        f"{TEMPLATE}.containers[0].env",
    ),
    "volume-mounts-true": (
        {"podTemplate": {"spec": {"containers": [{"name": "target", "volumeMounts": True}]}}},
        f"{TEMPLATE}.containers[0].volumeMounts",
    ),
    "env-from-text": (
        {"podTemplate": {"spec": {"containers": [{"name": "target", "envFrom": "x"}]}}},
        f"{TEMPLATE}.containers[0].envFrom",
    ),
    "volumes-5": ({"podTemplate": {"spec": {"volumes": 5}}}, f"{TEMPLATE}.volumes"),
    "tolerations-true": (
        {"podTemplate": {"spec": {"tolerations": True}}},
        f"{TEMPLATE}.tolerations",
    ),
}


def _spec_valid(status: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in status.get("conditions", []) if c["type"] == "SpecValid")


@pytest.mark.parametrize("name", list(CASES))
async def test_each_pod_template_crash_class_is_refused_at_admission(
    apiserver: ApiServer, name: str
) -> None:
    target, field = CASES[name]
    body = quickstart(name, None)
    body["spec"]["target"].update(target)
    with pytest.raises(ApiError) as refused:
        await apiserver.apply(body)
    assert refused.value.code == 422, refused.value
    assert field in refused.value.message, refused.value.message


async def test_a_cron_that_never_fires_is_refused_in_the_condition(
    apiserver: ApiServer, sa_operator: OperatorProcess
) -> None:
    sa_operator.start()
    body = quickstart("never", None)
    body["spec"]["schedule"] = {"cron": "0 0 30 2 *"}
    await apiserver.apply(body)  # five valid cron fields: only the models know it never fires
    status = await wait_for(lambda: apiserver.phase_in("never", "Failed"), 60, "Failed")
    condition = _spec_valid(status)
    assert (condition["status"], condition["reason"]) == ("False", "InvalidSpec")
    assert "spec.schedule.cron: '0 0 30 2 *' never fires" in condition["message"]
    assert "namespace" not in status


async def test_a_spec_past_the_admins_limits_is_refused_naming_the_limit(
    apiserver: ApiServer, sa_operator: OperatorProcess
) -> None:
    """Issue 52: the chart's `limits` (PLIMSOLL_LIMITS) bound what one run may use; a CR
    past one ends in SpecValid=False naming the limit and its value, nothing created."""
    sa_operator.start(env={"PLIMSOLL_LIMITS": '{"pods": 3, "trials": 10}'})
    await apiserver.apply(quickstart("greedy", None))
    status = await wait_for(lambda: apiserver.phase_in("greedy", "Failed"), 60, "Failed")
    condition = _spec_valid(status)
    assert (condition["status"], condition["reason"]) == ("False", "InvalidSpec")
    assert "over the operator's limit limits.pods = 3" in condition["message"], condition
    assert "limits.trials = 10" in condition["message"], condition
    assert "namespace" not in status  # nothing was started


async def test_a_template_past_the_admins_allow_lists_is_refused_naming_the_value(
    apiserver: ApiServer, sa_operator: OperatorProcess
) -> None:
    """Issue 52, item 4: the chart's `podTemplate` values (by default: no priority class,
    no toleration, no label, nodes only by a kind of node) hold what the model lets
    through; the operator, with the chart's own environment, names each field and value.
    Item 3, by the same operator: the chart lists no external target, so a `target.url`
    at another team's Service is refused as well, naming the chart's `externalTargets`."""
    sa_operator.start()
    aimed = quickstart("aimed", None)
    aimed["spec"]["target"] = {"url": "http://orders.team-b.svc.cluster.local:8080/"}
    await apiserver.apply(aimed)
    # Issue 53: a generator image the operator does not run was refused only when the
    # run started, as a failed run with its namespace made; now before anything is.
    imaged = quickstart("imaged", None)
    imaged["spec"]["generators"]["image"] = "someone/else:1"
    await apiserver.apply(imaged)
    body = quickstart("placed", None)
    body["spec"]["target"]["podTemplate"] = {
        "metadata": {"labels": {"sidecar.istio.io/inject": "true"}},
        "spec": {
            "priorityClassName": "business-critical",
            "nodeSelector": {"kubernetes.io/hostname": "node-7"},
        },
    }
    await apiserver.apply(body)  # the model allows each of them
    status = await wait_for(lambda: apiserver.phase_in("placed", "Failed"), 60, "Failed")
    condition = _spec_valid(status)
    assert (condition["status"], condition["reason"]) == ("False", "InvalidSpec")
    message = condition["message"]
    assert "spec.target.podTemplate.spec.priorityClassName: 'business-critical'" in message
    assert "podTemplate.priorityClasses" in message
    assert "spec.target.podTemplate.spec.nodeSelector.kubernetes.io/hostname" in message
    assert "spec.target.podTemplate.metadata.labels.sidecar.istio.io/inject" in message
    assert "namespace" not in status  # nothing was started
    status = await wait_for(lambda: apiserver.phase_in("aimed", "Failed"), 60, "Failed")
    message = _spec_valid(status)["message"]
    assert "spec.target.url: 'orders.team-b.svc.cluster.local' is not an external target" in (
        message
    )
    assert "Helm: externalTargets" in message
    status = await wait_for(lambda: apiserver.phase_in("imaged", "Failed"), 60, "Failed")
    condition = _spec_valid(status)
    assert (condition["status"], condition["reason"]) == ("False", "InvalidSpec")
    assert (
        "spec.generators.image: image 'someone/else:1' is not one this operator runs"
        in (condition["message"])
    )
    assert "namespace" not in status  # nothing was started
    assert "namespace" not in status
