"""The operator's life events against the emulated cluster: crash and resume, deletion,
a spec change, a rerun token, an invalid spec. Each starts the real `plimsoll operator`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.controller.conftest import Cluster, OperatorProcess, calls_outside_rbac, quickstart
from tests.controller.kubelet import Kubelet
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow


def _steps(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    return list(cluster.status(name).get("steps", []))


async def test_stopped_and_killed_mid_run_resumes_without_losing_a_step(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess, tmp_path: Any
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [kubelet.exporter.address], "500ms")
    try:
        operator.start(prometheus=prometheus.url)
        await cluster.apply(quickstart("crash", prometheus.url, levels=[20, 30, 40]))
        await cluster.wait(lambda: len(_steps(cluster, "crash")) >= 1, 60, "the first step")
        before = _steps(cluster, "crash")
        namespace = cluster.status("crash")["namespace"]
        # SIGTERM, as a rolling upgrade stops it: the run is left for the next operator,
        # neither failed nor torn down.
        assert await operator.terminate() == 0, operator.log()[-3000:]
        assert cluster.status("crash")["phase"] == "Running"
        assert kubelet.pids(namespace)
        operator.start(prometheus=prometheus.url)
        await cluster.wait(lambda: len(_steps(cluster, "crash")) >= 2, 60, "the second step")
        operator.kill()  # SIGKILL mid-run: nothing is cleaned up, nothing written
        assert cluster.status("crash")["phase"] == "Running"
        operator.start(prometheus=prometheus.url)
        status = await cluster.wait(
            lambda: (
                cluster.status("crash").get("phase") in ("Succeeded", "Failed")
                and cluster.status("crash")
            ),
            90,
            "the resumed run to finish",
        )
    finally:
        prometheus.stop()
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + operator.log()[-3000:]
    assert status["namespace"] == namespace  # the same run, resumed
    levels = [s["level"] for s in status["steps"]]
    assert levels == [20, 30, 40]  # no step lost, none run twice
    assert status["steps"][0] == before[0]  # the step measured before the crash is kept
    assert status["ceiling"]["level"] == 40
    assert calls_outside_rbac(cluster) == []


async def test_delete_mid_run_removes_namespace_and_processes(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess
) -> None:
    operator.start()
    await cluster.apply(quickstart("gone", None, levels=[20, 30, 40, 50], duration="5s"))
    await cluster.wait(lambda: cluster.status("gone").get("phase") == "Running", 60, "Running")
    namespace = cluster.status("gone")["namespace"]
    assert kubelet.pids(namespace)
    await cluster.delete("gone")
    await cluster.wait(lambda: cluster.get("gone") is None, 40, "the finalizer to let go")
    assert namespace not in cluster.emulator.namespaces
    assert not kubelet.pids(namespace)
    assert calls_outside_rbac(cluster) == []  # the finalizer's calls included


async def test_spec_change_and_rerun_token_start_new_runs(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess
) -> None:
    operator.start()
    await cluster.apply(quickstart("change", None, levels=[20, 30, 40, 50], duration="5s"))
    await cluster.wait(lambda: cluster.status("change").get("phase") == "Running", 60, "Running")
    first = cluster.status("change")["runId"]
    first_ns = cluster.status("change")["namespace"]
    # A new generation, as the API server bumps it on a spec change.
    await cluster.patch(
        "change", {"metadata": {"generation": 2}, "spec": {"trial": {"duration": "4s"}}}
    )
    await cluster.wait(
        lambda: (
            cluster.status("change").get("observedGeneration") == 2
            and cluster.status("change").get("phase") in ("Provisioning", "Running")
        ),
        60,
        "a new run for generation 2",
    )
    second = cluster.status("change")["runId"]
    assert second != first
    await cluster.wait(
        lambda: first_ns not in cluster.emulator.namespaces, 30, "the old namespace to go"
    )
    await cluster.patch("change", {"metadata": {"annotations": {"plimsoll.dev/rerun": "sync-1"}}})
    await cluster.wait(
        lambda: (
            cluster.status("change").get("rerunToken") == "sync-1"
            and cluster.status("change").get("runId") not in (first, second)
        ),
        60,
        "a new run for the rerun token",
    )


async def test_invalid_spec_fails_with_a_condition_naming_the_field(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess
) -> None:
    operator.start()
    body = quickstart("bad", None)
    body["spec"]["passWhen"]["latency"][0]["operation"] = "nosuch"  # passes the CRD, not us
    await cluster.apply(body)
    status = await cluster.wait(
        lambda: cluster.status("bad").get("phase") == "Failed" and cluster.status("bad"),
        30,
        "Failed",
    )
    spec_valid = next(c for c in status["conditions"] if c["type"] == "SpecValid")
    assert spec_valid["status"] == "False"
    assert spec_valid["reason"] == "InvalidSpec"
    assert "passWhen.latency names operation 'nosuch'" in spec_valid["message"]
    assert not cluster.emulator.namespaces  # nothing was started
    await asyncio.sleep(1)  # kopf's own bookkeeping patch may follow the verdict
    patches = len([c for c in cluster.emulator.calls if c[0] == "PATCH"])
    await asyncio.sleep(3)  # no retry storm, no crash loop: nothing more is written
    assert len([c for c in cluster.emulator.calls if c[0] == "PATCH"]) == patches
