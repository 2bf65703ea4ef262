"""The real operator against the emulated cluster: a run to the ceiling, and its life events.

Each test starts `plimsoll operator` as a process against kmock's emulated API
server, with the fake kubelet running the real mock, generator and target
processes on 127.0.0.x addresses (see `kubelet.py`).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from plimsoll.controller.events import COMPONENT
from tests.controller.conftest import Cluster, OperatorProcess, calls_outside_rbac, quickstart
from tests.controller.kubelet import Kubelet
from tests.metrics.conftest import free_port, start_prometheus

pytestmark = pytest.mark.slow


def _events(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    """Plimsoll's events about one CapacityTest, oldest first (kopf posts its own too)."""
    events = [
        e
        for _, _, e in cluster.emulator.live("events")
        if e["involvedObject"]["name"] == name and e["source"]["component"] == COMPONENT
    ]
    return sorted(events, key=lambda e: e["eventTime"])


async def _get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as http:
        return await http.get(url)


async def test_quickstart_reaches_a_cpu_bound_ceiling_with_events_and_metrics(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess, tmp_path: Any
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [kubelet.exporter.address], "500ms")
    health, metrics = free_port(), free_port()
    try:
        operator.start(
            f"--liveness=http://127.0.0.1:{health}/healthz",
            f"--metrics-port={metrics}",
            "--metrics-host=127.0.0.1",
            prometheus=prometheus.url,
        )
        # A quarter of a core: 20 rps of 4 ms work fits, 150 rps cannot.
        body = quickstart("quick", prometheus.url, levels=[20, 150])
        body["spec"]["target"]["resources"]["cpu"] = "250m"
        body["spec"]["target"]["env"]["WORK_MS"] = "4"
        await cluster.apply(body)
        await cluster.wait(lambda: cluster.status("quick").get("phase") == "Running", 60, "Running")
        # The operator's own endpoints while the run is under way.
        live = await _get(f"http://127.0.0.1:{health}/healthz")
        during = (await _get(f"http://127.0.0.1:{metrics}/metrics")).text
        status = await cluster.wait(
            lambda: (
                cluster.status("quick").get("phase") in ("Succeeded", "Failed")
                and cluster.status("quick")
            ),
            limit=90,
            what="a finished run",
        )
        after = (await _get(f"http://127.0.0.1:{metrics}/metrics")).text
    finally:
        prometheus.stop()
    assert kubelet.pinning.problem is None, kubelet.pinning.problem
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + operator.log()[-3000:]
    assert status["ceiling"].get("level") == 20, json.dumps(status, indent=1)
    # Pinned to its limits by the kubelet and read through cAdvisor's names: the
    # failing step was throttled, so the CPU is named, as on a real cluster.
    assert status["ceiling"]["limitedBy"] == "cpu", json.dumps(status, indent=1)
    # The memory limit was read from the cgroup too: the headroom is measured under it.
    free = status["ceiling"]["headroom"]["memoryFreeBytes"]
    assert 0 < free < 256 * 2**20, status["ceiling"]["headroom"]
    failing = status["steps"][1]
    assert failing["verdict"] == "fail"
    assert failing["throttledRatio"] > 0.2, failing
    assert status["stepCount"] == len(status["steps"]) == 2
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Ready"]["status"] == "True"
    assert conditions["Ready"]["reason"] == "CeilingFound"
    report = next(cm for ns, n, cm in cluster.emulator.live("configmaps") if n == "quick-report")
    assert json.loads(report["data"]["report.json"])["outcome"] == "succeeded"
    assert report["metadata"]["ownerReferences"][0]["kind"] == "CapacityTest"

    events = _events(cluster, "quick")
    reasons = [e["reason"] for e in events]
    expected = ["RunCreated", "Provisioning", "Running", "StepPassed", "StepFailed"]
    expected += ["CeilingFound", "Succeeded"]
    assert [r for r in reasons if r in expected] == expected, reasons
    by_reason = {e["reason"]: e for e in events}
    assert "level 20 rps pass" in by_reason["StepPassed"]["message"]
    assert "p99 " in by_reason["StepPassed"]["message"]
    assert "level 150 rps fail" in by_reason["StepFailed"]["message"]
    assert "ceiling 20 rps, limited by cpu" in by_reason["CeilingFound"]["message"]
    assert all(e["type"] == "Normal" for e in events)
    assert all(e["involvedObject"]["kind"] == "CapacityTest" for e in events)

    assert live.status_code == 200
    assert 'plimsoll_runs{phase="Running"} 1' in during
    assert 'plimsoll_runs{phase="Succeeded"} 1' in after
    assert 'plimsoll_runs{phase="Running"} 0' in after
    assert 'plimsoll_steps_total{verdict="pass"} 1' in after
    assert 'plimsoll_steps_total{verdict="fail"} 1' in after
    assert "plimsoll_step_duration_seconds_count 2" in after

    # cleanup: Always: the run's namespace is gone and so are its processes and cgroups
    await cluster.wait(lambda: not cluster.emulator.namespaces, 20, "namespace deletion")
    await cluster.wait(lambda: not kubelet.processes, 10, "processes to stop")
    assert not kubelet.pinning.groups
    # Every call the operator made is allowed by the RBAC rules the chart installs.
    assert calls_outside_rbac(cluster) == []
    assert any(agent != "plimsoll-tests" for *_, agent in cluster.emulator.calls)


async def test_concurrency_limit_queues_the_second_run_until_the_first_ends(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess, tmp_path: Any
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [kubelet.exporter.address], "500ms")
    try:
        await _queue_two_runs(cluster, operator, prometheus.url)
    finally:
        prometheus.stop()


async def _queue_two_runs(cluster: Cluster, operator: OperatorProcess, prometheus: str) -> None:
    # Through the pod-proxy relay, as an operator on a laptop reaches its generators.
    operator.start("--max-concurrent=1", "--reach=proxy", prometheus=prometheus)
    await cluster.apply(quickstart("first", prometheus, levels=[20]))
    await cluster.wait(
        lambda: cluster.status("first").get("phase") in ("Provisioning", "Running"),
        30,
        "the first run to start",
    )
    await cluster.apply(quickstart("second", prometheus, levels=[20]))
    queued = await cluster.wait(
        lambda: cluster.status("second").get("phase") == "Queued" and cluster.status("second"),
        30,
        "the second run to queue",
    )
    assert cluster.status("first")["phase"] in ("Provisioning", "Running")
    conditions = {c["type"]: c for c in queued["conditions"]}
    assert (conditions["Ready"]["status"], conditions["Ready"]["reason"]) == ("Unknown", "Queued")
    progressing = conditions["Progressing"]
    assert (progressing["status"], progressing["reason"]) == ("False", "Queued")
    assert "at most 1 at once" in progressing["message"]
    assert list(cluster.emulator.namespaces) == [cluster.status("first")["namespace"]]

    second = await cluster.wait(
        lambda: (
            cluster.status("second").get("phase") in ("Succeeded", "Failed")
            and cluster.status("second")
        ),
        90,
        "the second run to finish",
    )
    first = cluster.status("first")
    assert first["phase"] == "Succeeded", json.dumps(first, indent=1) + operator.log()[-3000:]
    assert second["phase"] == "Succeeded", json.dumps(second, indent=1) + operator.log()[-3000:]
    # It left the queue only once the first had finished.
    reasons = [(e["reason"], e["eventTime"]) for e in _events(cluster, "second")]
    assert [r for r, _ in reasons][:3] == ["RunCreated", "Queued", "Provisioning"], reasons
    provisioning = next(t for r, t in reasons if r == "Provisioning")
    assert provisioning >= first["completionTime"].replace("+00:00", "Z")
    # Every trial went through the API server's pod proxy, and RBAC allows it.
    proxied = [p for m, p, _, agent in cluster.emulator.calls if "/proxy/" in p]
    assert any(p.endswith("/proxy/trials") for p in proxied), proxied[:5]
    assert calls_outside_rbac(cluster) == []
