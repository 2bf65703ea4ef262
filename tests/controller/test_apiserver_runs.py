"""Whole runs against the real API server, with the chart's RBAC only.

Each test starts the real `plimsoll operator` as a process logged in as the
chart's ServiceAccount; the real scheduler binds its pods to the test kubelet's
node, which runs the real mock, generator and target processes
(`real_kubelet.py`); the real Job controller runs the setup Jobs. Every pod and
Job lands in a run namespace labelled PodSecurity `restricted`, so each run also
proves the admission accepts them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import TARGET_APP, OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.metrics.conftest import free_port, start_prometheus

pytestmark = pytest.mark.slow


def _deployment(name: str, namespace: str) -> dict[str, Any]:
    """A team's Deployment of the quickstart's target, as `kubectl apply` would hold it;
    no replicas of its own, so only the run's copy loads the node."""
    labels = {"app": name}
    app = {
        "name": "app",
        "image": "plimsoll-test/target:dev",
        "command": ["python", str(TARGET_APP)],
        "env": [{"name": "WORK_MS", "value": "4"}, {"name": "TEAM", "value": "checkout"}],
        "ports": [{"name": "http", "containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [app]}},
        },
    }


async def test_quickstart_reaches_a_cpu_bound_ceiling_gated_with_events_and_metrics(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    """The target is a team's own Deployment (`target.fromDeployment`, issue 55): the
    operator copies its container into the run, pinned to the spec's shape, and finds
    its ceiling and what limits it."""
    namespace = apiserver.namespace
    await apiserver.api.create(
        f"/apis/apps/v1/namespaces/{namespace}/deployments", _deployment("shop-api", namespace)
    )
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    health, metrics = free_port(), free_port()
    try:
        sa_operator.start(
            f"--liveness=http://127.0.0.1:{health}/healthz",
            f"--metrics-port={metrics}",
            "--metrics-host=127.0.0.1",
            prometheus=prometheus.url,
        )
        # A quarter of a core: 20 rps of 4 ms work fits, 150 rps cannot. The regression
        # gate's baseline is a fixed level the target cannot reach, so its verdict does
        # not depend on a first run: a band of 20..150 against 1,000 is a regression.
        body = quickstart("quick", prometheus.url, levels=[20, 150])
        body["spec"]["target"] = {
            "fromDeployment": {"name": "shop-api"},
            "resources": {"cpu": "250m", "memory": "256Mi"},
        }
        body["spec"]["regression"] = {"baseline": "1000", "threshold": "10%"}
        await apiserver.apply(body)
        running = await wait_for(lambda: apiserver.phase_in("quick", "Running"), 90, "Running")
        pods = await apiserver.api.items(
            f"/api/v1/namespaces/{running['namespace']}/pods",
            labelSelector="plimsoll.dev/role=target",
        )
        live = await _get(f"http://127.0.0.1:{health}/healthz")
        during = (await _get(f"http://127.0.0.1:{metrics}/metrics")).text
        status = await wait_for(
            lambda: apiserver.phase_in("quick", "Succeeded", "Failed"), 120, "a finished run"
        )
        after = (await _get(f"http://127.0.0.1:{metrics}/metrics")).text
    finally:
        prometheus.stop()
    assert node_kubelet.pinning.problem is None, node_kubelet.pinning.problem
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    # The run's target is the Deployment's container, copied, at the spec's shape.
    [pod] = pods
    [container] = [c for c in pod["spec"]["containers"] if c["name"] == "target"]
    assert container["image"] == "plimsoll-test/target:dev"
    assert container["command"] == ["python", str(TARGET_APP)]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["WORK_MS"], env["TEAM"]) == ("4", "checkout")
    assert container["resources"]["limits"] == container["resources"]["requests"]
    assert container["resources"]["limits"]["cpu"] == "250m"
    assert status["ceiling"]["level"] == 20, json.dumps(status, indent=1)
    # Pinned by the kubelet and read through cAdvisor's names: the failing step was
    # throttled, so the CPU is named; the memory headroom is measured under the limit.
    assert status["ceiling"]["limitedBy"] == "cpu", json.dumps(status, indent=1)
    assert 0 < status["ceiling"]["headroom"]["memoryFreeBytes"] < 256 * 2**20
    assert status["steps"][1]["throttledRatio"] > 0.2, status["steps"][1]
    assert status["observedGeneration"] == 1
    conditions = {c["type"]: c for c in status["conditions"]}
    assert (conditions["Ready"]["status"], conditions["Ready"]["reason"]) == (
        "True",
        "CeilingFound",
    )
    # Least privilege: the report's ConfigMap right is a RoleBinding the operator made
    # here, to its report role, the Deployment's read one to its references role (get
    # only, never list), and its run namespace had one to its run role.
    rbac_path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{apiserver.namespace}/rolebindings"
    bindings = {b["roleRef"]["name"] for b in await apiserver.api.items(rbac_path)}
    assert bindings == {"plimsoll-report", "plimsoll-references"}, bindings
    report_path = f"/api/v1/namespaces/{apiserver.namespace}/configmaps/quick-report"
    report = await apiserver.api.get(report_path) or {}
    assert json.loads(report["data"]["report.json"])["outcome"] == "succeeded"
    assert report["metadata"]["ownerReferences"][0]["kind"] == "CapacityTest"

    events = await apiserver.events("quick")
    expected = ["RunCreated", "Provisioning", "Running", "StepPassed", "StepFailed"]
    expected += ["CeilingFound", "Succeeded"]
    assert [e["reason"] for e in events if e["reason"] in expected] == expected
    by_reason = {e["reason"]: e for e in events}
    assert "level 150 rps fail" in by_reason["StepFailed"]["message"]
    assert "ceiling 20 rps, limited by cpu" in by_reason["CeilingFound"]["message"]

    _regressed_everywhere(status, events, apiserver)

    assert live.status_code == 200
    assert 'plimsoll_runs{phase="Running"} 1' in during
    assert 'plimsoll_runs{phase="Succeeded"} 1' in after
    assert 'plimsoll_steps_total{verdict="fail"} 1' in after
    # cleanup: Always: the controller manager finalized the run's namespace, the
    # kubelet confirmed every pod's deletion, and no process or cgroup is left.
    await wait_for(lambda: apiserver.namespace_gone(status["namespace"]), 60, "the namespace")
    assert not node_kubelet.pids(status["namespace"])
    assert not node_kubelet.pinning.groups
    assert forbidden(sa_operator) == []
    assert node_kubelet.errors == []


def _regressed_everywhere(
    status: dict[str, Any], events: list[dict[str, Any]], apiserver: ApiServer
) -> None:
    """A ceiling below its baseline beyond noise: Succeeded *and* Regressed, with the
    numbers in the condition, a Warning Event, the Change column and status.history."""
    shown = json.dumps(status, indent=1)
    [verdict] = status["regression"]
    assert verdict["regressed"] is True, shown
    assert (verdict["baseline"], verdict["current"]) == (1000, 20)
    assert status["change"] == "-98% REGRESSED"
    conditions = {c["type"]: c for c in status["conditions"]}
    regressed = conditions["Regressed"]
    assert (regressed["status"], regressed["reason"]) == ("True", "Regressed")
    assert "20 rps vs 1000 rps (fixed level), -98%: regressed" in regressed["message"]
    assert [e["runId"] for e in status["history"]] == [status["runId"]]
    [warning] = [e for e in events if e["reason"] == "Regressed"]
    assert warning["type"] == "Warning"
    assert "-98%: regressed" in warning["message"]
    table = apiserver.plane.kubectl(
        "get", "capacitytest", "quick", "-n", apiserver.namespace
    ).stdout.splitlines()
    header, row = table[0].split(), table[1].split()
    assert row[header.index("CHANGE")] == "-98%"  # the column's value, then the flag
    assert "REGRESSED" in table[1]


async def _get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as http:
        return await http.get(url)


async def test_a_failing_setup_job_fails_the_run_naming_the_job(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess
) -> None:
    sa_operator.start()
    body = quickstart("seedless", None)
    fail = ["python", "-c", "raise SystemExit('no seed')"]
    body["spec"]["target"]["setup"] = [{"name": "seed", "command": fail}]
    await apiserver.apply(body)
    # The real Job controller counts the pod's failure (backoffLimit 0) and the
    # operator reads that from the Job's status.
    status = await wait_for(lambda: apiserver.phase_in("seedless", "Failed"), 90, "Failed")
    assert "setup job setup-seed failed" in status["message"], json.dumps(status, indent=1)
    assert forbidden(sa_operator) == []
