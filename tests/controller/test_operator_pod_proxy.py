"""The real operator against the emulated cluster, reaching its generators by the pod proxy.

An operator outside the cluster (a laptop) reaches the generators through the
API server's pod proxy. A real API server refuses to proxy to a loopback pod IP
("address not allowed"), and the test kubelet's pods live on 127.0.0.x, so this
path runs against kmock's emulated API server (`fake_cluster.py`), whose proxy
forwards as a real one does; everything else runs against the real control
plane (`test_apiserver_*.py`). The fake kubelet (`kubelet.py`) runs the real
mock, generator and target processes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.controller.conftest import Cluster, OperatorProcess, calls_outside_rbac, quickstart
from tests.controller.kubelet import Kubelet
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow


async def test_trials_reach_the_generators_through_the_pod_proxy(
    cluster: Cluster, kubelet: Kubelet, operator: OperatorProcess, tmp_path: Any
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [kubelet.exporter.address], "500ms")
    try:
        operator.start("--reach=proxy", prometheus=prometheus.url)
        await cluster.apply(quickstart("relay", prometheus.url, levels=[20]))
        status = await cluster.wait(
            lambda: (
                cluster.status("relay").get("phase") in ("Succeeded", "Failed")
                and cluster.status("relay")
            ),
            90,
            "the run to finish",
        )
    finally:
        prometheus.stop()
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + operator.log()[-3000:]
    # Every trial went through the API server's pod proxy, and RBAC allows it.
    proxied = [p for m, p, _, agent in cluster.emulator.calls if "/proxy/" in p]
    assert any(p.endswith("/proxy/trials") for p in proxied), proxied[:5]
    assert calls_outside_rbac(cluster) == []
    # The relay's URLs carry its token (issue 52): never written where tenants read.
    assert "@127.0.0.1" not in json.dumps(status)
