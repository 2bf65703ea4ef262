"""Dead equipment on the real API server: a generator pod and the mock pod deleted mid-trial.

The real `plimsoll operator` runs as the chart's ServiceAccount; the real scheduler
binds the run's pods to the test kubelet's node, which runs the real mock,
generator and target processes (`real_kubelet.py`) and, as kube-proxy would, keeps
the mock's Service name on one address whose connections follow the Service to the
pod behind it now (`service_proxy.py`). The test deletes pods as an eviction or a
`kubectl delete pod` would: the kubelet stops the process and confirms the deletion.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.controller.service_proxy import ServiceProxies
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow


async def _under_way(apiserver: ApiServer, name: str, index: int) -> dict[str, Any] | None:
    status = await apiserver.status(name)
    current = status.get("currentStep") or {}
    return status if current.get("index") == index else None


async def _delete_mid_trial(apiserver: ApiServer, name: str, step: int, pod: str) -> dict[str, Any]:
    """Once step `step` is under way, delete `pod` a second into its trial; the pod as it
    was, to tell the replacement from it."""
    status = await wait_for(lambda: _under_way(apiserver, name, step), 90, f"step {step}")
    path = f"/api/v1/namespaces/{status['namespace']}/pods/{pod}"
    before = await apiserver.api.get(path)
    assert before is not None
    await asyncio.sleep(1.0)
    await apiserver.api.delete(path)
    return before


async def test_deleted_generator_and_mock_pods_are_recreated_and_the_run_finds_its_ceiling(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    node_kubelet.services = ServiceProxies(apiserver.api)
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        sa_operator.start(prometheus=prometheus.url)
        body = quickstart("spares", prometheus.url, levels=[20, 30, 40], duration="4s")
        body["spec"]["cleanup"] = "Never"  # the replacements stay to be looked at
        await apiserver.apply(body)
        old_generator = await _delete_mid_trial(apiserver, "spares", 1, "generator-0")
        # Step 2 retries level 30 on the new generator; step 3 is level 40's first trial.
        old_mock = await _delete_mid_trial(apiserver, "spares", 3, "mock-0")
        status = await wait_for(
            lambda: apiserver.phase_in("spares", "Succeeded", "Failed"), 120, "a finished run"
        )
    finally:
        prometheus.stop()
    shown = json.dumps(status, indent=1)
    assert status["phase"] == "Succeeded", shown + sa_operator.log()
    steps = [(s["level"], s["verdict"], s["attempt"]) for s in status["steps"]]
    # Each trial that lost a piece is invalid, and its retry ran on the replacement.
    assert steps == [
        (20, "pass", 1),
        (30, "invalid", 1),
        (30, "pass", 2),
        (40, "invalid", 1),
        (40, "pass", 2),
    ], shown
    assert "generator" in " ".join(status["steps"][1]["reasons"]), shown
    assert "pod mock-0" in status["steps"][3]["reasons"][0], shown
    assert status["ceiling"]["level"] == 40, shown

    replaced = [
        e["message"] for e in await apiserver.events("spares") if e["reason"] == "EquipmentReplaced"
    ]
    assert len(replaced) == 2, replaced
    assert replaced[0].startswith("pod generator-0 "), replaced
    assert "started again (1 of 3 replacements)" in replaced[0]
    assert replaced[1].startswith("pod mock-0 "), replaced
    assert "started again (2 of 3 replacements)" in replaced[1]

    # New pods under the same names, on new addresses; the target followed the mock's
    # Service to the new one (its calls after the replacement passed).
    namespace = status["namespace"]
    for old in (old_generator, old_mock):
        name = old["metadata"]["name"]
        new = await apiserver.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        assert new is not None, name
        assert new["metadata"]["uid"] != old["metadata"]["uid"], name
    assert node_kubelet.services.relayed > 0
    assert forbidden(sa_operator) == []
    assert node_kubelet.errors == []
