"""A proof run on the real API server: three Nodes in three zones, one target replica
in each, and zone c's pod deleted mid-trial.

As `tests/run/test_prove_local.py` does locally: each replica is pinned to 0.25 CPU and
every request costs 10 ms of CPU (`examples/targets/cpu_bound.py`), so one replica
carries at most 25 requests/s and the two left after the loss 50. At 35 requests/s the
two carry it and the proof holds; at 60 they cannot and it does not. The real
scheduler places each replica by its zone's node affinity on the test kubelet of that
zone; the real operator, as the chart's ServiceAccount, deletes zone c's pod with
grace period 0 at the fault; the generator reaches the replicas through the target
Service's name, which the kube-proxy and DNS stand-in (`service_proxy.py`) resolves,
relaying each new connection to the next ready replica. Status carries the sentence.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bench.real_shapes import ROOT
from tests.controller import pod_addresses
from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.controller.service_proxy import ServiceProxies
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow
ZONES = ["a", "b", "c"]
LOST_AT = 3.0


@pytest.fixture
async def zone_kubelets(
    apiserver: ApiServer, tmp_path: Path
) -> AsyncIterator[tuple[list[RealKubelet], ServiceProxies]]:
    services = ServiceProxies(apiserver.api, hosts=Path("/etc/hosts"), slices=True)
    prefix = pod_addresses.random_prefix()  # off loopback: the slices may hold them
    kubelets = []
    for zone in ZONES:
        workdir = tmp_path / f"kubelet-{zone}"
        workdir.mkdir()
        kubelet = RealKubelet(
            apiserver.api,
            workdir,
            services=services,
            pod_prefix=prefix,
            labels={"topology.kubernetes.io/zone": zone},
        )
        await kubelet.start()
        kubelets.append(kubelet)
    watch = asyncio.create_task(services.watch())
    try:
        yield kubelets, services
    finally:
        watch.cancel()
        await asyncio.gather(watch, return_exceptions=True)
        for kubelet in kubelets:
            await kubelet.stop()
        await services.stop()


def proof_test(name: str, prometheus: str, level: int) -> dict[str, Any]:
    body = quickstart(name, prometheus)
    spec = body["spec"]
    spec["target"].update(
        command=["python", str(ROOT / "examples" / "targets" / "cpu_bound.py")],
        env={"WORK_MS": "10"},
        resources={"cpu": "250m", "memory": "128Mi"},
        replicas=3,
        zones=ZONES,
    )
    spec["trial"] = {
        "duration": "8s",
        "warmUp": "1s",
        "slice": "500ms",
        "faults": [{"at": f"{LOST_AT:g}s", "remove": {"zone": "c"}}],
    }
    spec["search"] = {"strategy": "prove", "level": level}
    spec["workload"]["timeout"] = "3s"
    spec["passWhen"] = {"latency": [{"quantile": "p99", "below": "400ms"}], "minAchieved": "90%"}
    spec["noise"] = {}  # the product's defaults: a step run while the host is busy is repeated
    return body


async def _prove(
    apiserver: ApiServer,
    kubelets: list[RealKubelet],
    operator: OperatorProcess,
    prometheus: str,
    level: int,
) -> dict[str, Any]:
    name = f"prove-{level}"
    await apiserver.apply(proof_test(name, prometheus, level))
    status: dict[str, Any] = await wait_for(
        lambda: apiserver.phase_in(name, "Succeeded", "Failed"), 300, f"{name} finished"
    )
    print(json.dumps(status.get("proof"), indent=1))
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + operator.log()
    assert forbidden(operator) == []
    for kubelet in kubelets:
        assert kubelet.errors == []
    return status


def _pods_by_zone(report: dict[str, Any]) -> dict[str, str]:
    """Which replica ran in which zone, from the report's placement lines."""
    placed = {}
    for line in report["placement"]:
        if line.startswith("target") and ", zone " in line:
            placed[line.split(" ")[0]] = line.rsplit(", zone ", 1)[1].rstrip(")")
    return placed


async def test_the_two_zones_left_carry_a_load_under_their_ceiling_and_not_one_over(
    apiserver: ApiServer,
    zone_kubelets: tuple[list[RealKubelet], ServiceProxies],
    sa_operator: OperatorProcess,
    tmp_path: Path,
) -> None:
    kubelets, services = zone_kubelets
    exporters = [k.exporter.address for k in kubelets]
    prometheus = await start_prometheus(tmp_path / "prom", exporters, "500ms")
    try:
        sa_operator.start(prometheus=prometheus.url)
        held = await _prove(apiserver, kubelets, sa_operator, prometheus.url, 35)
        over = await _prove(apiserver, kubelets, sa_operator, prometheus.url, 60)
    finally:
        prometheus.stop()
    proof = held["proof"]
    assert proof["held"] is True, proof
    assert proof["sentence"].startswith("3 replicas across 3 zones held 35 requests/s; ")
    assert proof["fault"] == f"zone c lost at {LOST_AT:g} s"
    assert proof["sentence"].endswith("; it held."), proof["sentence"]
    [proved] = [c for c in held["conditions"] if c["type"] == "Proved"]
    assert proved["status"] == "True"
    report_map = await apiserver.api.get(
        f"/api/v1/namespaces/{apiserver.namespace}/configmaps/prove-35-report"
    )
    report = json.loads((report_map or {})["data"]["report.json"])
    assert _pods_by_zone(report) == {"target": "a", "target-1": "b", "target-2": "c"}
    step = report["steps"][-1]
    assert [o["taken"] for o in step["faults"]] == [["target-2"]]
    # Each replica ran on its own zone's node, and the generator's connections were
    # spread over all three through the Service's stand-in.
    nodes = {k.name: k.labels["topology.kubernetes.io/zone"] for k in kubelets}
    placed = [line for line in report["placement"] if line.startswith("target")]
    for line in placed:
        node = line.split(" on ")[1].split(" ")[0]
        assert nodes[node] == line.rsplit(", zone ", 1)[1].rstrip(")"), line
    # The stand-in took its backends from the EndpointSlices the controller manager wrote:
    # three pod addresses off loopback, then the two left once zone c's pod was deleted.
    # A clean-clone CI run (2026-12-06) saw the slices go 3 -> none -> 3 around the loss
    # (the controller manager rewrote them whole), not through 2: the stand-in followed
    # them either way, which is what this checks; the proof's figures are judged above.
    counts = [len(ips) for ips in services.history["plimsoll-target"]]
    assert 3 in counts, services.history
    assert min(counts[counts.index(3) :]) < 3, services.history
    assert len(services.by_backend) >= 3, services.by_backend
    prefix = kubelets[0].pod_prefix
    assert prefix is not None
    assert all(ip.startswith(prefix) for ip in services.by_backend), services.by_backend
    # The other replicas are measured beside the first, each as its own role.
    assert {"target-1", "target-2"} <= step["others"].keys(), step["others"].keys()
    assert step["others"]["target-1"]["cpuMeanCores"] > 0, step["others"]["target-1"]

    proof = over["proof"]
    assert proof["held"] is False, proof
    assert proof["sentence"].startswith("3 replicas across 3 zones ran 60 requests/s; ")
    assert proof["sentence"].endswith("; it did not hold."), proof["sentence"]
    [proved] = [c for c in over["conditions"] if c["type"] == "Proved"]
    assert proved["status"] == "False"
