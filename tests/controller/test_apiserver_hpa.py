"""The cluster's own HPA controller scales a Deployment on the test kubelet (issue 57).

The ground an autoscaler flight on a cluster stands on: kube-controller-manager's
HorizontalPodAutoscaler controller, reading pod CPU from `metrics.k8s.io` through the
API server's aggregation layer (served here by `metrics_api.py` from the test kubelet's
cgroups, as metrics-server serves it from the kubelets'), scales a real Deployment
whose pods the test kubelet runs pinned. One pod of the CPU-bound example target,
requests == limits == 200m, is sent 30 requests/s of 10 ms of CPU each (1.5 times what
it can do): it uses its whole quota, 100% of its request against a 50% target, and the
controller asks for two replicas. The HPA's status carries the utilization it read.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.metrics_api import MetricsApi, register, unregister
from tests.controller.real_kubelet import RealKubelet
from tests.localrun import ROOT

pytestmark = pytest.mark.slow

LOAD_RPS = 30  # 10 ms of CPU each: 0.3 cores offered to a pod held to 0.2
LOAD_LIMIT_S = 120.0  # the load loop's bound


def _deployment(name: str) -> dict[str, Any]:
    shape = {"cpu": "200m", "memory": "64Mi"}
    container = {
        "name": "main",
        "image": "plimsoll-examples:test",
        "command": ["python", str(ROOT / "examples" / "targets" / "cpu_bound.py")],
        "env": [
            {"name": "PORT", "value": "8080"},
            {"name": "WORK_MS", "value": "10"},
            # the example targets bind their pod's address when told it, as a pod must
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        ],
        "resources": {"requests": shape, "limits": shape},
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 1},
    }
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def _hpa(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50},
                    },
                }
            ],
        },
    }


async def _load(kubelet: RealKubelet, namespace: str, stop: asyncio.Event) -> int:
    """LOAD_RPS to the Deployment's first pod until `stop` (at most LOAD_LIMIT_S); sent."""
    calls: set[asyncio.Task[httpx.Response]] = set()
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=5) as http:
        while not stop.is_set() and time.monotonic() - started < LOAD_LIMIT_S:
            ips = sorted(r.state.ip for r in kubelet.running.values() if r.key[0] == namespace)
            if ips:
                calls.add(asyncio.create_task(http.get(f"http://{ips[0]}:8080/work")))
            await asyncio.sleep(1 / LOAD_RPS)
        await asyncio.gather(*calls, return_exceptions=True)  # the last answers
    return len(calls)


async def test_the_clusters_hpa_scales_a_deployment_on_the_cpu_its_pods_use(
    apiserver: ApiServer, node_kubelet: RealKubelet, tmp_path: Path
) -> None:
    api, namespace = apiserver.api, apiserver.namespace
    metrics = MetricsApi(
        lambda: [
            (run.pod, run.exported)
            for run in list(node_kubelet.running.values())
            if run.popen.poll() is None
        ],
        tmp_path,
    )
    port = await metrics.start()
    stop = asyncio.Event()
    try:
        await register(api, port)
        account = f"/api/v1/namespaces/{namespace}/serviceaccounts/default"
        await wait_for(lambda: api.get(account), 20, "the default ServiceAccount")
        await api.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", _deployment("burn"))
        await api.create(
            f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers", _hpa("burn")
        )
        deployment = f"/apis/apps/v1/namespaces/{namespace}/deployments/burn"

        async def ready() -> bool:
            found = await api.get(deployment) or {}
            return bool((found.get("status") or {}).get("readyReplicas"))

        # Loaded before its first readiness probe, the one-threaded target answers it late
        # and stays unready, and the HPA leaves unready pods' CPU out.
        await wait_for(ready, 30, "the first replica to be ready")
        load = asyncio.create_task(_load(node_kubelet, namespace, stop))

        async def scaled() -> dict[str, Any] | None:
            found = await api.get(deployment) or {}
            return found if (found.get("spec") or {}).get("replicas", 1) >= 2 else None

        hpa_path = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/burn"
        try:
            await wait_for(scaled, 90, "the HPA to ask for a second replica")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {await api.get(hpa_path)}; {metrics.served}") from exc
        hpa = await api.get(hpa_path)
        stop.set()
        sent = await load
    finally:
        stop.set()
        await unregister(api)
        await metrics.stop()
    assert sent > 0
    assert hpa is not None
    status = hpa["status"]
    assert status["desiredReplicas"] >= 2, status
    [current] = status["currentMetrics"]
    # The pod used its whole quota (200m, its request), about 100% against the 50% target;
    # beside another test on this host it may get less, but it asked for more than 50%.
    utilization = current["resource"]["current"]["averageUtilization"]
    assert 55 <= utilization <= 110, status
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions["ScalingActive"] == "True", status["conditions"]
