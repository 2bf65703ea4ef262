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


async def test_queued_runs_start_in_order_and_a_held_lock_does_not_block_the_line(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess
) -> None:
    sa_operator.start("--max-concurrent=2")
    # a and b share a lock; a runs long enough for b, c and d to queue behind it.
    bodies = {name: quickstart(name, None, levels=[20]) for name in "abcd"}
    for name in "ac":
        bodies[name]["spec"]["trial"]["duration"] = "20s"
    for name in "ab":
        bodies[name]["spec"]["target"]["lockKey"] = "shared-shop"
    await apiserver.apply(bodies["a"])
    await wait_for(lambda: apiserver.phase_in("a", "Provisioning", "Running"), 60, "a's run")
    for name in "bcd":
        await apiserver.apply(bodies[name])
    # c takes the second slot although b is ahead of it: b waits for its lock only.
    await wait_for(lambda: apiserver.phase_in("c", "Provisioning", "Running"), 60, "c's run")
    b = await wait_for(lambda: apiserver.phase_in("b", "Queued"), 30, "b Queued")
    assert b["queuePosition"] == 1, b
    assert f"'{apiserver.namespace}/shared-shop'" in b["message"], b  # the namespace's key
    # d may first be third, behind b and a c that had its slot but had not started yet;
    # once c runs, d's next poll moves it up.
    d = await wait_for(lambda: _at_position(apiserver, "d", 2), 30, "d second in the queue")
    assert "at most 2 at once" in d["message"], d
    progressing = next(c for c in d["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "Queued")
    # Without Prometheus every step is invalid; what matters is when each run started.
    done = {}
    for name in "abcd":
        done[name] = await wait_for(
            lambda name=name: apiserver.phase_in(name, "Succeeded", "Failed"), 180, name
        )
        assert "queuePosition" not in done[name], done[name]
    started = {name: await _provisioned_at(apiserver, name) for name in "abcd"}
    ended = {name: done[name]["completionTime"].replace("+00:00", "Z") for name in "abcd"}
    assert started["c"] < ended["a"]  # beside a: the lock held b back, not c
    assert started["b"] >= ended["a"]  # b only once a let go of the lock
    assert started["d"] >= min(ended["a"], ended["c"])  # d only once a slot was free
    assert forbidden(sa_operator) == []


async def _at_position(apiserver: ApiServer, name: str, position: int) -> Any:
    status = await apiserver.phase_in(name, "Queued")
    return status if status and status.get("queuePosition") == position else None


async def _provisioned_at(apiserver: ApiServer, name: str) -> str:
    reasons = [(e["reason"], e["eventTime"]) for e in await apiserver.events(name)]
    return next(time for reason, time in reasons if reason == "Provisioning")


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


async def test_a_run_past_the_admins_deadline_ends_failed_with_its_steps_kept(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    """Issue 52: nothing bounded how long a run held its pods. Past limits.deadline
    (wall time from its start) the run is stopped: Failed, the reason named, the steps
    it measured kept in its status."""
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        limits = '{"deadline": "40s"}'
        sa_operator.start(prometheus=prometheus.url, env={"PLIMSOLL_LIMITS": limits})
        # Light steps that all pass: the search would climb through 40 levels.
        body = quickstart("endless", prometheus.url, levels=list(range(1, 41)))
        await apiserver.apply(body)
        await wait_for(lambda: _has_steps(apiserver, "endless"), 60, "a first step")
        status = await wait_for(lambda: apiserver.phase_in("endless", "Failed"), 90, "Failed")
    finally:
        prometheus.stop()
    message = status["message"]
    assert "the run passed its deadline: 40s since it started" in message, json.dumps(status)
    assert "limits.deadline" in message
    assert status["steps"], status  # kept
    assert len(status["steps"]) < 40  # stopped before its search ended
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "RunFailed")
    assert "deadline" in ready["message"]


async def _has_steps(apiserver: ApiServer, name: str) -> Any:
    status = await apiserver.status(name)
    return status if status.get("steps") else None
