"""The test kubelet on the real API server reports what a kubelet reports.

It is the ground the operator tests stand on, so its own behaviour is tested:
a container that exits under `restartPolicy: Always` is restarted and counted,
one killed by its cgroup's memory limit is reported OOMKilled (exit 137), a
pod that ends under `Never` is Succeeded, and a deleted pod is stopped and
confirmed gone well before its 30 s grace period.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.real_kubelet import RealKubelet

pytestmark = pytest.mark.slow

# Fails (or allocates past its limit) on its first start, then stays up.
ONCE = (
    "import os, sys, time\n"
    "if not os.path.exists(sys.argv[1]):\n"
    "    open(sys.argv[1], 'w').close()\n"
    "    if sys.argv[2] == 'oom':\n"
    "        hog = b'x' * (400 * 2**20)\n"
    "    sys.exit(3)\n"
    "time.sleep(120)\n"
)


def _pod(name: str, command: list[str], restart: str = "Always") -> dict[str, Any]:
    limits = {"cpu": "500m", "memory": "64Mi"}
    container = {"name": "main", "image": "test", "command": command}
    container["resources"] = {"limits": limits, "requests": limits}
    spec = {"containers": [container], "restartPolicy": restart}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


async def _create(apiserver: ApiServer, body: dict[str, Any]) -> None:
    path = f"/api/v1/namespaces/{apiserver.namespace}/pods"
    # A new namespace's `default` ServiceAccount comes within a second; until then
    # pods are refused.
    account = f"/api/v1/namespaces/{apiserver.namespace}/serviceaccounts/default"
    await wait_for(lambda: apiserver.api.get(account), 20, "the default ServiceAccount")
    await apiserver.api.create(path, body)


async def test_restarts_oom_kills_completion_and_deletion(
    apiserver: ApiServer, node_kubelet: RealKubelet, tmp_path: Path
) -> None:
    once = ["python", "-c", ONCE]
    await _create(apiserver, _pod("crash", [*once, str(tmp_path / "crash"), "exit"]))
    await _create(apiserver, _pod("oom", [*once, str(tmp_path / "oom"), "oom"]))
    await _create(apiserver, _pod("done", ["python", "-c", "print('done')"], "Never"))
    pods = f"/api/v1/namespaces/{apiserver.namespace}/pods"

    async def container(name: str, restarts: int = 1) -> dict[str, Any] | None:
        pod = await apiserver.api.get(f"{pods}/{name}") or {}
        statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
        return statuses[0] if statuses[0].get("restartCount", 0) >= restarts else None

    crash = await wait_for(lambda: container("crash"), 30, "a restart")
    assert crash["lastState"]["terminated"]["exitCode"] == 3
    assert crash["lastState"]["terminated"]["reason"] == "Error"
    assert "running" in crash["state"]
    oom = await wait_for(lambda: container("oom"), 30, "a restart after the OOM kill")
    assert node_kubelet.pinning.problem is None, node_kubelet.pinning.problem
    assert oom["lastState"]["terminated"]["reason"] == "OOMKilled", oom
    assert oom["lastState"]["terminated"]["exitCode"] == 137
    done = await wait_for(lambda: container("done", 0), 30, "the third pod's status")
    pod = await wait_for(
        lambda: _phase(apiserver, f"{pods}/done", "Succeeded"), 30, "the pod to end"
    )
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False"
    assert ready["lastTransitionTime"] >= pod["status"]["startTime"]
    assert done["name"] == "main"

    pid = node_kubelet.pids(apiserver.namespace)
    assert pid
    started = asyncio.get_running_loop().time()
    await apiserver.api.delete(f"{pods}/crash")  # the default grace period: 30 s
    await wait_for(lambda: _gone(apiserver, f"{pods}/crash"), 10, "the deletion confirmed")
    assert asyncio.get_running_loop().time() - started < 10
    assert len(node_kubelet.pids(apiserver.namespace)) == 1  # only "oom" still runs


async def _phase(apiserver: ApiServer, path: str, phase: str) -> dict[str, Any] | None:
    pod = await apiserver.api.get(path) or {}
    return pod if (pod.get("status") or {}).get("phase") == phase else None


async def _gone(apiserver: ApiServer, path: str) -> bool:
    return await apiserver.api.get(path) is None
