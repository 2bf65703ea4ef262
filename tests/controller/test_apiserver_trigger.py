"""A run on every new image (issue 58, items 2 and 5), on the real API server and operator.

A CapacityTest copies a team's Deployment (`target.fromDeployment`) and watches it
(`trigger.onImageChange`): its first run serves the image the Deployment runs; when
the team rolls out a new image, the operator starts a new run for it on its own (no
spec change, no annotation), says why in the event, and records the image served.
With `contract.annotate` the Deployment carries its proven capacity: proven for the
first image after the first run, unproven once the new image rolls out, proven for
the new one once its run passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.controller.test_apiserver_runs import _deployment
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow

FIRST, SECOND = "plimsoll-test/target:dev", "plimsoll-test/target:next"


async def test_a_new_image_of_the_watched_deployment_starts_a_run_for_it(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    namespace = apiserver.namespace
    deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    await apiserver.api.create(deployments, _deployment("shop-api", namespace))
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        sa_operator.start(prometheus=prometheus.url)
        body = quickstart("release", prometheus.url, levels=[5, 400])
        body["spec"]["target"] = {
            "fromDeployment": {"name": "shop-api"},
            "resources": {"cpu": "250m", "memory": "256Mi"},
        }
        body["spec"]["trigger"] = {"onImageChange": {"deployment": "shop-api"}}
        body["spec"]["contract"] = {"annotate": True}
        body["spec"]["workload"]["timeout"] = "1s"  # the failing level ends promptly
        await apiserver.apply(body)
        first = await wait_for(
            lambda: apiserver.phase_in("release", "Succeeded", "Failed"), 120, "the first run"
        )
        assert first["triggerImage"] == FIRST, json.dumps(first, indent=1)
        proven = await wait_for(lambda: _contract(apiserver, "proven", FIRST), 20, "proven")
        assert proven["proven"]["runId"] == first["runId"]
        assert proven["proven"]["image"] == FIRST
        assert proven["proven"]["ceiling"] == first["ceiling"]["level"]
        assert (proven["proven"]["cpu"], proven["proven"]["memory"]) == ("250m", "256Mi")
        # (Level 400 fails at 250m: a ceiling, hence a proof; a lower bound proves nothing.)
        # The team rolls out a new image: nothing of the CapacityTest changes.
        # A patch, as `kubectl set image` sends one: a read-then-PUT met 409 Conflict in
        # CI once, the operator's contract annotation having changed the object between.
        image = [
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": SECOND}
        ]
        await apiserver.api.call(
            "PATCH",
            f"{deployments}/shop-api",
            json=image,
            headers={"Content-Type": "application/json-patch+json"},
        )
        # Until a run passes for it, the new image's capacity is unproven; the last proof
        # stays beside it.
        unproven = await wait_for(lambda: _contract(apiserver, "unproven", SECOND), 60, "unproven")
        assert unproven["proven"]["image"] == FIRST

        async def second_run_done() -> dict[str, object] | None:
            status = await apiserver.status("release")
            served = status.get("triggerImage") == SECOND
            done = status.get("phase") in ("Succeeded", "Failed")
            return status if served and done else None

        second = await wait_for(second_run_done, 120, "a run for the new image")
    finally:
        prometheus.stop()
    assert second["runId"] != first["runId"]
    assert second["phase"] == "Succeeded", json.dumps(second, indent=1) + sa_operator.log()
    assert second["observedGeneration"] == first["observedGeneration"] == 1
    started = [
        e["message"] for e in await apiserver.events("release") if e["reason"] == "RunCreated"
    ]
    assert any(f"(ImageChanged): the deployment runs {SECOND} now" in m for m in started), started
    again = await wait_for(lambda: _contract(apiserver, "proven", SECOND), 20, "proven again")
    assert again["proven"]["runId"] == second["runId"]
    reasons = [e["reason"] for e in await apiserver.events("release")]
    assert reasons.count("CapacityProven") == 2, reasons
    assert "CapacityUnproven" in reasons, reasons


async def _contract(apiserver: ApiServer, state: str, image: str) -> dict[str, Any] | None:
    """The shop-api Deployment's contract once it is `state` for `image`."""
    path = f"/apis/apps/v1/namespaces/{apiserver.namespace}/deployments/shop-api"
    deployment = await apiserver.api.get(path) or {}
    annotations = (deployment.get("metadata") or {}).get("annotations") or {}
    if annotations.get("plimsoll.dev/capacity-state") != state:
        return None
    contract: dict[str, Any] = json.loads(annotations["plimsoll.dev/capacity"])
    return contract if contract.get("image") == image else None
