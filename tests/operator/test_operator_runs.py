"""The real operator against the emulated cluster: a run to the ceiling, and its life events.

Each test starts `plimsoll operator` as a process against kmock's emulated API
server, with the fake kubelet running the real mock, generator and target
processes on 127.0.0.x addresses (see `kubelet.py`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.metrics.conftest import start_prometheus
from tests.operator.conftest import Cluster, OperatorProcess, calls_outside_rbac, quickstart
from tests.operator.kubelet import Kubelet

pytestmark = pytest.mark.slow


async def test_quickstart_reaches_succeeded_with_a_ceiling(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess, tmp_path: Any
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [kubelet.exporter.address], "500ms")
    try:
        operator.start()
        await cluster.apply(quickstart("quick", prometheus.url, levels=[20, 40]))
        status = await cluster.wait(
            lambda: (
                cluster.status("quick").get("phase") in ("Succeeded", "Failed")
                and cluster.status("quick")
            ),
            limit=90,
            what="a finished run",
        )
    finally:
        prometheus.stop()
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + operator.log()[-3000:]
    assert status["ceiling"].get("level") == 40, json.dumps(status, indent=1)
    assert status["stepCount"] == len(status["steps"]) == 2
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Ready"]["status"] == "True"
    assert conditions["Ready"]["reason"] == "CeilingFound"
    report = next(cm for ns, n, cm in cluster.emulator.live("configmaps") if n == "quick-report")
    assert json.loads(report["data"]["report.json"])["outcome"] == "succeeded"
    assert report["metadata"]["ownerReferences"][0]["kind"] == "CapacityTest"
    # cleanup: Always: the run's namespace is gone and so are its processes
    await cluster.wait(lambda: not cluster.emulator.namespaces, 20, "namespace deletion")
    await cluster.wait(lambda: not kubelet.processes, 10, "processes to stop")
    # Every call the operator made is allowed by the RBAC rules the chart installs.
    assert calls_outside_rbac(cluster) == []
    assert any(agent != "plimsoll-tests" for *_, agent in cluster.emulator.calls)
