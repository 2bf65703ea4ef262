"""The operator's life events against the real API server, with the chart's RBAC only.

Each test starts the real `plimsoll operator` as a process logged in as the
chart's ServiceAccount; the real scheduler binds its pods to the test kubelet's
node, which runs the real mock, generator and target processes
(`real_kubelet.py`). Every pod and Job lands in a run namespace labelled
PodSecurity `restricted`, so each run also proves the admission accepts them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow


async def test_quickstart_reaches_a_cpu_bound_ceiling(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        sa_operator.start()
        # A quarter of a core: 20 rps of 4 ms work fits, 150 rps cannot.
        body = quickstart("quick", prometheus.url, levels=[20, 150])
        body["spec"]["target"]["resources"]["cpu"] = "250m"
        body["spec"]["target"]["env"]["WORK_MS"] = "4"
        await apiserver.apply(body)
        status = await wait_for(
            lambda: apiserver.phase_in("quick", "Succeeded", "Failed"), 120, "a finished run"
        )
    finally:
        prometheus.stop()
    assert node_kubelet.pinning.problem is None, node_kubelet.pinning.problem
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    assert status["ceiling"]["level"] == 20, json.dumps(status, indent=1)
    assert status["ceiling"]["limitedBy"] == "cpu", json.dumps(status, indent=1)
    assert status["steps"][1]["throttledRatio"] > 0.2, status["steps"][1]
    assert status["observedGeneration"] == 1
    # cleanup: Always: the controller manager finalized the run's namespace, the
    # kubelet confirmed every pod's deletion, and no process is left.
    await wait_for(lambda: apiserver.namespace_gone(status["namespace"]), 60, "the namespace")
    assert not node_kubelet.pids(status["namespace"])
    assert not node_kubelet.pinning.groups
    assert forbidden(sa_operator) == []
    assert node_kubelet.errors == []


def _steps(status: dict[str, Any]) -> list[dict[str, Any]]:
    return list(status.get("steps", []))
