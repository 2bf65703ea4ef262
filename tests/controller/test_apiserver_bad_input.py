"""Specs the CRD lets through but the models refuse, on the real API server and operator.

`podTemplate` is a free-form object in the CRD (the allow-list is the model's), so a
`containers: 5` or an `env: 5` reaches the operator; before, the `TypeError` escaped
its daemon and kopf retried it forever with no condition written. A cron that never
fires (30 February) used to pass, then crash-loop the daemon in `get_prev` after the
first run. Each must end in `SpecValid=False` naming the field, once, with nothing
started. The real `plimsoll operator` runs as the chart's ServiceAccount.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plimsoll.controller.handlers import FINALIZER, KOPF_PREFIX
from tests.controller.admin_api import wait_for
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


async def test_each_pod_template_crash_class_ends_in_spec_valid_false(
    apiserver: ApiServer, sa_operator: OperatorProcess
) -> None:
    sa_operator.start()
    for name, (target, _) in CASES.items():
        body = quickstart(name, None)
        body["spec"]["target"].update(target)
        await apiserver.apply(body)  # the CRD accepts it: podTemplate is free-form there
    for name, (_, field) in CASES.items():
        status = await wait_for(lambda n=name: apiserver.phase_in(n, "Failed"), 60, name)
        condition = _spec_valid(status)
        assert (condition["status"], condition["reason"]) == ("False", "InvalidSpec"), name
        assert f"{field}: must be a list" in condition["message"], (name, condition)
        assert "namespace" not in status  # nothing was started
    # kopf's own writes (its finalizer, then its last-handled annotation) race the
    # daemon's status write: kopf spawns daemons before it adds the finalizer. Count
    # from when both are on the object, so a later version can only be another write of
    # ours. (CI once saw 639 where 638 was expected: kopf's annotation, landed after.)
    versions = {}
    for name in CASES:
        settled = await wait_for(lambda n=name: _kopf_settled(apiserver, n), 60, name)
        versions[name] = settled["metadata"]["resourceVersion"]
    await asyncio.sleep(3)  # written once: no retried daemon, no crash loop
    for name, version in versions.items():
        assert (await apiserver.get(name) or {})["metadata"]["resourceVersion"] == version, name
        warnings = [e for e in await apiserver.events(name) if e["reason"] == "InvalidSpec"]
        assert len(warnings) == 1, (name, warnings)
    assert "Traceback" not in sa_operator.log()


async def _kopf_settled(apiserver: ApiServer, name: str) -> dict[str, Any] | None:
    """The object once kopf's bookkeeping is on it (finalizer and last-handled state)."""
    found = await apiserver.get(name) or {}
    meta = found.get("metadata", {})
    handled = f"{KOPF_PREFIX}/last-handled-configuration" in (meta.get("annotations") or {})
    return found if FINALIZER in meta.get("finalizers", []) and handled else None


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
