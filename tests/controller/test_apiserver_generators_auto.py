"""`generators.replicas: auto` on the real API server: a generator pod that saturates
makes its step invalid, and the retry runs on more generator pods and is valid.

As `tests/run/test_generators_auto.py` does locally, the bar for a saturated generator
(`maxCpu`) comes from a measurement in the same test: a first CapacityTest runs one
generator pod at an eighth of the level and at the level, and the bar is set halfway
between its two peaks (a generator's cost per request differs between hosts by 2-3x,
so a fixed bar would either never trip or never clear). The second CapacityTest asks
for `auto`; the real operator, as the chart's ServiceAccount, creates the added
generator pods in the run's namespace, under its quota, and the real scheduler binds
them to the test kubelet's node, which runs them as real processes in cgroups.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.real_shapes import ROOT
from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.controller.test_apiserver_variants import prometheus_for

pytestmark = pytest.mark.slow

LEVEL = 1200  # requests per second, uniform
SHARE = 8


def cpu_bound(name: str, prometheus: str, levels: list[int], generators: dict[str, Any]) -> Any:
    body = quickstart(name, prometheus, levels=levels)
    spec = body["spec"]
    spec["target"]["command"] = ["python", str(ROOT / "examples" / "targets" / "cpu_bound.py")]
    spec["target"]["env"] = {"WORK_MS": "0"}
    spec["target"]["resources"] = {"cpu": "500m", "memory": "128Mi"}
    spec["trial"] = {"duration": "3s", "warmUp": "500ms"}
    spec["generators"] = generators
    return body


async def finished(apiserver: ApiServer, name: str) -> dict[str, Any]:
    status: dict[str, Any] = await wait_for(
        lambda: apiserver.phase_in(name, "Succeeded", "Failed"), 240, f"{name} finished"
    )
    return status


async def test_auto_adds_generator_pods_when_one_saturates_and_the_retry_is_valid(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    async with prometheus_for(node_kubelet, tmp_path) as prometheus:
        sa_operator.start(prometheus=prometheus.url)
        one = {"replicas": 1, "processes": 1, "maxCpu": "100%"}
        await apiserver.apply(cpu_bound("calibrate", prometheus.url, [LEVEL // SHARE, LEVEL], one))
        calibration = await finished(apiserver, "calibrate")
        light, heavy = (s["generatorPeakCpu"] for s in calibration["steps"])
        assert heavy > 1.5 * light, (
            f"one generator pod peaked at {heavy:.3f} cores at {LEVEL}/s and {light:.3f} at "
            f"{LEVEL // SHARE}/s: its fixed cost hides the load on this host"
        )
        max_cpu = (light + heavy) / 2
        auto = {"replicas": "auto", "maxReplicas": 4, "maxCpu": f"{max_cpu * 100:.1f}%"}
        await apiserver.apply(cpu_bound("auto", prometheus.url, [LEVEL], auto))
        status = await finished(apiserver, "auto")
    print(f"calibration peaks: {light:.3f} and {heavy:.3f}; maxCpu {max_cpu:.3f}")
    for step in status["steps"]:
        print(step["level"], step["generators"], step["verdict"], step["generatorPeakCpu"])
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    first, *retries = status["steps"]
    # One generator pod sent the whole level and went past the bar: invalid, not the end.
    assert (first["generators"], first["verdict"]) == (1, "invalid"), first
    assert any("a generator used" in reason for reason in first["reasons"]), first
    # The retry of the same level ran on more pods, sized from the first's CPU, and held.
    assert retries, "the saturated step was not retried"
    last = retries[-1]
    assert last["level"] == LEVEL
    assert last["generators"] > 1, last
    assert last["verdict"] == "pass", last
    counts = [s["generators"] for s in status["steps"]]
    assert counts == sorted(counts)  # never scaled down
    report_map = await apiserver.api.get(
        f"/api/v1/namespaces/{apiserver.namespace}/configmaps/auto-report"
    )
    report = json.loads((report_map or {})["data"]["report.json"])
    assert any(line.startswith("generators (default): 1 -> ") for line in report["placement"])
    added = [line for line in report["placement"] if line.startswith("generator-")]
    assert len({line.split(" ")[0] for line in added}) == last["generators"], report["placement"]
    print("\n".join(report["placement"]))
    assert forbidden(sa_operator) == []
    assert node_kubelet.errors == []
