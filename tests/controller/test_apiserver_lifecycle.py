"""The operator's life events against the real API server, with the chart's RBAC only.

Each test starts the real `plimsoll operator` as a process logged in as the
chart's ServiceAccount, and SIGTERMs, SIGKILLs or restarts it, deletes the
resource, changes its spec or asks for a rerun; the real scheduler binds the
run's pods to the test kubelet's node, which runs the real mock, generator and
target processes (`real_kubelet.py`), and the real controller manager finalizes
the run namespaces.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow


async def _steps(apiserver: ApiServer, name: str, at_least: int) -> list[dict[str, Any]] | None:
    steps = list((await apiserver.status(name)).get("steps", []))
    return steps if len(steps) >= at_least else None


async def test_stopped_and_killed_mid_run_resumes_without_losing_a_step(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        sa_operator.start(prometheus=prometheus.url)
        await apiserver.apply(quickstart("crash", prometheus.url, levels=[20, 30, 40]))
        before = await wait_for(lambda: _steps(apiserver, "crash", 1), 90, "the first step")
        namespace = (await apiserver.status("crash"))["namespace"]
        # SIGTERM, as a rolling upgrade stops it: the run is left for the next operator.
        assert await sa_operator.terminate() == 0, sa_operator.log()[-3000:]
        assert (await apiserver.status("crash"))["phase"] == "Running"
        assert node_kubelet.pids(namespace)
        sa_operator.start(prometheus=prometheus.url)
        await wait_for(lambda: _steps(apiserver, "crash", 2), 60, "the second step")
        sa_operator.kill()  # SIGKILL mid-run: nothing is cleaned up, nothing written
        assert (await apiserver.status("crash"))["phase"] == "Running"
        sa_operator.start(prometheus=prometheus.url)
        status = await wait_for(
            lambda: apiserver.phase_in("crash", "Succeeded", "Failed"), 90, "the resumed run"
        )
    finally:
        prometheus.stop()
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    assert status["namespace"] == namespace  # the same run, resumed
    assert [s["level"] for s in status["steps"]] == [20, 30, 40]  # none lost, none twice
    assert status["steps"][0] == before[0]
    assert forbidden(sa_operator) == []


async def test_delete_mid_run_finalizes_the_namespace_and_stops_the_processes(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess
) -> None:
    sa_operator.start()
    await apiserver.apply(quickstart("gone", None, levels=[20, 30, 40, 50], duration="5s"))
    status = await wait_for(lambda: apiserver.phase_in("gone", "Running"), 90, "Running")
    namespace = status["namespace"]
    assert node_kubelet.pids(namespace)
    await apiserver.api.delete(apiserver.path("gone"))
    await wait_for(
        lambda: _absent(apiserver.get("gone")), 60, "the finalizer to let the resource go"
    )
    # The finalizer held the resource until the controller manager had finalized the
    # run's namespace, which waited for the kubelet to confirm every pod gone.
    assert await apiserver.namespace_gone(namespace)
    assert not node_kubelet.pids(namespace)
    assert forbidden(sa_operator) == []


async def _absent(pending: Awaitable[dict[str, Any] | None]) -> bool:
    return await pending is None


async def test_invalid_spec_fails_with_a_condition_naming_the_field(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess
) -> None:
    sa_operator.start()
    body = quickstart("bad", None)
    body["spec"]["passWhen"]["latency"][0]["operation"] = "nosuch"  # passes the CRD, not us
    await apiserver.apply(body)
    status = await wait_for(lambda: apiserver.phase_in("bad", "Failed"), 60, "Failed")
    spec_valid = next(c for c in status["conditions"] if c["type"] == "SpecValid")
    assert (spec_valid["status"], spec_valid["reason"]) == ("False", "InvalidSpec")
    assert "passWhen.latency names operation 'nosuch'" in spec_valid["message"]
    assert "namespace" not in status  # nothing was started
    version = (await apiserver.get("bad") or {})["metadata"]["resourceVersion"]
    await asyncio.sleep(3)  # no retry storm, no crash loop: nothing more is written
    assert (await apiserver.get("bad") or {})["metadata"]["resourceVersion"] == version


async def test_spec_change_and_rerun_token_start_new_runs(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess
) -> None:
    sa_operator.start()
    await apiserver.apply(quickstart("change", None, levels=[20, 30, 40, 50], duration="5s"))
    first = await wait_for(lambda: apiserver.phase_in("change", "Running"), 90, "Running")
    # The API server bumps the generation on a spec change, and only then.
    patched = await apiserver.api.patch(
        apiserver.path("change"), {"spec": {"trial": {"duration": "4s"}}}
    )
    assert patched["metadata"]["generation"] == 2

    async def second_run() -> dict[str, Any] | None:
        status = await apiserver.status("change")
        fresh = status.get("observedGeneration") == 2 and status["runId"] != first["runId"]
        return status if fresh else None

    second = await wait_for(second_run, 60, "a new run for generation 2")
    await wait_for(lambda: apiserver.namespace_gone(first["namespace"]), 60, "the old namespace")
    await apiserver.api.patch(
        apiserver.path("change"), {"metadata": {"annotations": {"plimsoll.dev/rerun": "sync-1"}}}
    )

    async def rerun() -> bool:
        status = await apiserver.status("change")
        runs = (first["runId"], second["runId"])
        return status.get("rerunToken") == "sync-1" and status.get("runId") not in runs

    await wait_for(rerun, 60, "a new run for the rerun token")
    assert forbidden(sa_operator) == []
