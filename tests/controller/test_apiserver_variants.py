"""Variants on the real API server: each variant's own pods, `status.variants`, kubectl's columns.

The real `plimsoll operator` runs as the chart's ServiceAccount, the real
scheduler binds the pods to the test kubelet's node, which runs the real mock,
generator and target processes (`real_kubelet.py`) and confirms every pod's
deletion, and `kubectl get`'s columns are read as the API server renders them
(the Table form of the list).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.metrics.conftest import PrometheusServer, start_prometheus

pytestmark = pytest.mark.slow

TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}
VARIANT = "plimsoll.dev/variant"


def pair(name: str, prometheus: str, cleanup: str, heavy_ms: int = 3) -> dict[str, Any]:
    """Two variants of one quick run; heavy's own env does `heavy_ms` times light's work."""
    body = quickstart(name, prometheus, levels=[20])
    # These tests check the variants' mechanics, not capacity: 20 rps of a few ms passes
    # with room to spare even when the shared machine stalls the generator for a while
    # (the achieved-share and latency rules have tests of their own).
    body["spec"]["passWhen"] = {
        "minAchieved": "50%",
        "latency": [{"quantile": "p99", "below": "3s"}],
    }
    body["spec"]["cleanup"] = cleanup
    body["spec"]["variants"] = [
        {"name": "light", "env": {"WORK_MS": "1"}},
        {"name": "heavy", "env": {"WORK_MS": str(heavy_ms)}},
    ]
    return body


@asynccontextmanager
async def prometheus_for(kubelet: RealKubelet, folder: Path) -> AsyncIterator[PrometheusServer]:
    server = await start_prometheus(folder / "prom", [kubelet.exporter.address], "500ms")
    try:
        yield server
    finally:
        server.stop()


async def columns(apiserver: ApiServer, name: str) -> dict[str, Any]:
    """`kubectl get capacitytest NAME`'s columns, as the API server's Table has them."""
    table = await apiserver.api.call("GET", apiserver.path(), headers=TABLE)
    headers = [c["name"] for c in table["columnDefinitions"]]
    row = next(r for r in table["rows"] if r["cells"][0] == name)
    return dict(zip(headers, row["cells"], strict=True))


async def run_pods(apiserver: ApiServer, namespace: str) -> dict[str, dict[str, Any]]:
    pods = await apiserver.api.items(f"/api/v1/namespaces/{namespace}/pods")
    return {p["metadata"]["name"]: p for p in pods}


def assert_compared(status: dict[str, Any]) -> None:
    """Both ceilings in status.variants, the baseline's in status.ceiling."""
    rows = [
        (v["name"], v["state"], v.get("ceiling"), v["unit"], v.get("verdict"))
        for v in status["variants"]
    ]
    # Both passed 20 with nothing failing above: their bands overlap, within noise.
    assert rows == [
        ("light", "Succeeded", 20, "rps", "baseline"),
        ("heavy", "Succeeded", 20, "rps", "within noise"),
    ], json.dumps([status["variants"], status["steps"]], indent=1)
    assert [v["deltaPercent"] for v in status["variants"]] == [0.0, 0.0]
    assert all(v["lastPass"] == 20 for v in status["variants"])
    assert (status["ceiling"]["variant"], status["ceiling"]["level"]) == ("light", 20)


async def test_cleanup_always_runs_the_variants_in_turn_never_side_by_side(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    """Also each variant's own env reaching its own target, and a named baseline that is
    not the first variant compared in the report (once the emulated cluster's test)."""
    seen: list[set[str]] = []  # the variants whose pods existed at once, poll by poll

    async def watch() -> None:
        while True:
            namespace = (await apiserver.status("turns")).get("namespace")
            if namespace:
                pods = (await run_pods(apiserver, namespace)).values()
                seen.append({p["metadata"]["labels"][VARIANT] for p in pods})
            await asyncio.sleep(0.2)

    # Twenty times the work per request, so the CPU tells the variants apart: at 20 rps
    # 1 ms against 3 ms is 0.02 against 0.06 cores beside the target's own ~0.045 idle.
    async with prometheus_for(node_kubelet, tmp_path) as prometheus:
        sa_operator.start(prometheus=prometheus.url)
        body = pair("turns", prometheus.url, "Always", heavy_ms=20)
        body["spec"]["baseline"] = "heavy"  # not the first: named
        await apiserver.apply(body)
        watcher = asyncio.create_task(watch())
        try:
            running = await wait_for(
                lambda: apiserver.phase_in("turns", "Running"), 90, "the first variant running"
            )
            # kubectl shows how many variants at once, before any ceiling.
            assert running["variantCount"] == 2
            during = await columns(apiserver, "turns")
            status = await wait_for(
                lambda: apiserver.phase_in("turns", "Succeeded", "Failed"), 150, "a finished run"
            )
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
    shown = json.dumps([status.get("variants"), status.get("steps")], indent=1)
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    assert during["Variants"] == 2
    rows = [(v["name"], v["state"], v.get("ceiling"), v.get("verdict")) for v in status["variants"]]
    assert rows == [
        ("light", "Succeeded", 20, "within noise"),
        ("heavy", "Succeeded", 20, "baseline"),
    ], shown
    assert (status["ceiling"]["variant"], status["ceiling"]["level"]) == ("heavy", 20)
    after = await columns(apiserver, "turns")
    assert (after["Ceiling"], after["Unit"], after["Variants"]) == (20, "rps", 2)
    report_path = f"/api/v1/namespaces/{apiserver.namespace}/configmaps/turns-report"
    saved = json.loads(((await apiserver.api.get(report_path)) or {})["data"]["report.json"])
    light, heavy = saved["steps"]
    # The heavy variant's own env reached its own target.
    assert heavy["target"]["cpuMeanCores"] > 1.8 * light["target"]["cpuMeanCores"], shown
    comparison = saved["comparison"]
    assert comparison["baseline"] == "heavy"
    assert comparison["commonLevel"] == 20
    assert [v["name"] for v in comparison["variants"]] == ["light", "heavy"]
    assert comparison["headline"].startswith("light holds")
    # Each variant had its pods; the second's started only once the first's were gone.
    assert {"light"} in seen, seen
    assert {"heavy"} in seen, seen
    assert not [s for s in seen if len(s) > 1], seen
    await wait_for(lambda: apiserver.namespace_gone(status["namespace"]), 60, "the namespace")
    assert not node_kubelet.pids(status["namespace"])
    assert forbidden(sa_operator) == []
    assert node_kubelet.errors == []


async def test_cleanup_never_keeps_both_variants_pods_under_their_own_names(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    async with prometheus_for(node_kubelet, tmp_path) as prometheus:
        sa_operator.start(prometheus=prometheus.url)
        await apiserver.apply(pair("kept", prometheus.url, "Never"))
        status = await wait_for(
            lambda: apiserver.phase_in("kept", "Succeeded", "Failed"), 150, "a finished run"
        )
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    assert_compared(status)
    shown = await columns(apiserver, "kept")
    assert (shown["Ceiling"], shown["Variants"]) == (20, 2)
    pods = await run_pods(apiserver, status["namespace"])
    assert sorted(pods) == [
        "generator-0-heavy",
        "generator-0-light",
        "mock-0-heavy",
        "mock-0-light",
        "target-heavy",
        "target-light",
    ]
    for name, pod in pods.items():
        assert pod["metadata"]["labels"][VARIANT] == name.rsplit("-", 1)[1]
        assert not pod["metadata"].get("deletionTimestamp")
    # The second variant did not adopt the first's target: each runs its own env.
    work = {
        name: {e["name"]: e.get("value") for e in pods[name]["spec"]["containers"][0]["env"]}
        for name in ("target-light", "target-heavy")
    }
    assert (work["target-light"]["WORK_MS"], work["target-heavy"]["WORK_MS"]) == ("1", "3")
    # ... and reaches its own mock.
    assert "plimsoll-mock-heavy." in work["target-heavy"]["UPSTREAM_URL"]
    assert node_kubelet.pids(status["namespace"])  # still running: kept on purpose
    assert forbidden(sa_operator) == []


async def test_a_run_resumed_in_the_second_variant_adopts_its_pods_and_skips_the_first(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    async def heavy_running() -> dict[str, Any] | None:
        status = await apiserver.status("resumed")
        current = status.get("currentStep") or {}
        return status if current.get("variant") == "heavy" else None

    uids: dict[str, set[str]] = {}  # pod name -> the uids seen after the restart

    async def watch(namespace: str) -> None:
        while True:
            for name, pod in (await run_pods(apiserver, namespace)).items():
                uids.setdefault(name, set()).add(pod["metadata"]["uid"])
            await asyncio.sleep(0.2)

    async with prometheus_for(node_kubelet, tmp_path) as prometheus:
        sa_operator.start(prometheus=prometheus.url)
        body = pair("resumed", prometheus.url, "Always")
        body["spec"]["trial"]["duration"] = "6s"  # room to be killed in the middle of it
        await apiserver.apply(body)
        during = await wait_for(heavy_running, 150, "the second variant's trial")
        namespace = during["namespace"]
        before = await run_pods(apiserver, namespace)
        sa_operator.kill()  # SIGKILL in the second variant's trial: nothing cleaned up
        assert [v["state"] for v in during["variants"]] == ["Succeeded", "Running"]
        assert sorted(before) == ["generator-0-heavy", "mock-0-heavy", "target-heavy"]
        watcher = asyncio.create_task(watch(namespace))
        try:
            sa_operator.start(prometheus=prometheus.url)
            status = await wait_for(
                lambda: apiserver.phase_in("resumed", "Succeeded", "Failed"), 150, "the resumed run"
            )
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    assert status["namespace"] == namespace  # the same run, resumed
    assert_compared(status)
    # The heavy target and mock were adopted, not replaced (the generator is replaced on
    # purpose: one left mid-trial may still be loading the target); the light variant,
    # whose search was complete, was not started again.
    for name in ("target-heavy", "mock-0-heavy"):
        assert uids[name] == {before[name]["metadata"]["uid"]}, name
    assert not [name for name in uids if name.endswith("-light")], sorted(uids)
    # Light's step was kept from the first operator; heavy's interrupted trial ran again.
    assert [(s["variant"], s["level"]) for s in status["steps"]] == [("light", 20), ("heavy", 20)]
    assert forbidden(sa_operator) == []
