"""An autoscaler flight on the real API server (issue 57): the cluster's HPA scales the
target, and the operator measures what the burst cost.

The operator, as the chart's ServiceAccount (its RBAC and admission policy), makes the
target a Deployment with its HPA in the run's namespace; kube-controller-manager's own
HPA controller reads the pods' CPU from `metrics.k8s.io` (served by `metrics_api.py`
from the test kubelet's cgroups, as metrics-server serves it) and scales the Deployment;
the test kubelet runs each pod pinned; the generator sends the profile through the
target Service's name, which `service_proxy.py` (kube-proxy and DNS's stand-in)
relays to the ready pods the EndpointSlices list.

The CPU-bound example target at 200m and 10 ms of CPU a request carries 20 requests/s a
pod (`perPod`). The profile holds 8 requests/s, then steps to 36: one pod cannot carry
it, it uses its whole quota (100% of its request against a 50% target), and the HPA asks
for more. The status carries the flight's figures, measured by the operator from the
Deployment, the HPA and the pods as they changed: replicas rising, each new pod's lag,
the seconds p99 spent over the bar, with the cluster named as the one that scaled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.controller import pod_addresses
from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.metrics_api import MetricsApi, register, unregister
from tests.controller.real_kubelet import RealKubelet
from tests.controller.service_proxy import ServiceProxies
from tests.localrun import ROOT

pytestmark = pytest.mark.slow

BASE_RPS, PEAK_RPS = 8, 36  # a pod carries 20


@pytest.fixture
async def flight_kubelet(
    apiserver: ApiServer, tmp_path: Path
) -> AsyncIterator[tuple[RealKubelet, ServiceProxies]]:
    """One node whose pods sit off loopback, behind the Services' stand-in."""
    services = ServiceProxies(apiserver.api, hosts=Path("/etc/hosts"), slices=True)
    workdir = tmp_path / "kubelet"
    workdir.mkdir()
    kubelet = RealKubelet(
        apiserver.api, workdir, services=services, pod_prefix=pod_addresses.random_prefix()
    )
    await kubelet.start()
    watch = asyncio.create_task(services.watch())
    try:
        yield kubelet, services
    finally:
        watch.cancel()
        await asyncio.gather(watch, return_exceptions=True)
        await kubelet.stop()
        await services.stop()


def flight_test(name: str) -> dict[str, Any]:
    body = quickstart(name, None)
    spec = body["spec"]
    spec["target"].update(
        command=["python", str(ROOT / "examples" / "targets" / "cpu_bound.py")],
        env={"WORK_MS": "10"},
        resources={"cpu": "200m", "memory": "64Mi"},
        portEnv="PORT",
        autoscaler={"minReplicas": 1, "maxReplicas": 3, "targetCpuUtilization": 50},
    )
    # The HPA syncs every 15 s: within 36 s of the step it has read the one pod at its
    # quota and asked for a second, and read the two and asked for a third.
    spec["workload"]["profile"] = [
        {"level": BASE_RPS, "hold": "8s"},
        {"level": PEAK_RPS, "hold": "36s"},
    ]
    spec["workload"]["timeout"] = "3s"
    spec["trial"] = {"duration": "44s", "warmUp": "0s", "slice": "1s"}
    spec["search"] = {"strategy": "autoscale"}
    spec["autoscale"] = {"perPod": 20}
    spec["passWhen"] = {"latency": [{"quantile": "p99", "below": "300ms"}]}
    return body


async def test_the_clusters_hpa_scales_the_flights_deployment_and_the_status_measures_it(
    apiserver: ApiServer,
    flight_kubelet: tuple[RealKubelet, ServiceProxies],
    sa_operator: OperatorProcess,
    tmp_path: Path,
) -> None:
    kubelet, services = flight_kubelet
    metrics = MetricsApi(
        lambda: [
            (run.pod, run.exported)
            for run in list(kubelet.running.values())
            if run.popen.poll() is None
        ],
        tmp_path,
    )
    port = await metrics.start()
    try:
        await register(apiserver.api, port)
        sa_operator.start()
        await apiserver.apply(flight_test("burst"))
        status: dict[str, Any] = await wait_for(
            lambda: apiserver.phase_in("burst", "Succeeded", "Failed"), 240, "the flight"
        )
    finally:
        await unregister(apiserver.api)
        await metrics.stop()
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    assert forbidden(sa_operator) == []
    assert kubelet.errors == []
    flight = status["autoscaling"]
    assert flight["controller"] == "cluster", flight
    start, peak = (int(n) for n in flight["replicas"].split(" -> "))
    assert start == 1, flight
    assert peak >= 2, (flight, metrics.served[-5:])
    # The step to 36 requests/s left one pod short at once, and the new pods took the
    # HPA's sync (15 s) and their start to serve: a lag, and p99 over the bar meanwhile.
    assert flight["lagSeconds"] is not None, flight
    assert flight["lagSeconds"] > 0, flight
    assert flight["secondsOverBar"] > 0, flight
    assert flight["verdict"] in ("held", "did not hold")
    assert flight["sentence"].startswith(f"{BASE_RPS} rps for 8 s, to {PEAK_RPS} at once"), flight
    # The load reached the added pods through the Service: connections to more than one
    # backend. (The first pod kept its share of the new ones all the while, as kube-proxy
    # gives it, and the queue the step left on it: on 2026-12-08, with 12 s and 48 s
    # holds, 1 -> 3 pods in 32 s, p99 never back within the bar, 42% failed, the
    # connections 623/176/29 over the three.)
    assert len(services.by_backend) >= 2, services.by_backend
    report_map = await apiserver.api.get(
        f"/api/v1/namespaces/{apiserver.namespace}/configmaps/burst-report"
    )
    report = json.loads((report_map or {})["data"]["report.json"])
    [step] = report["steps"]
    replicas = step["flight"]["replicas"]
    assert max(r["desired"] for r in replicas) >= 2, replicas
    assert step["flight"]["podStartS"] is not None, step["flight"]
