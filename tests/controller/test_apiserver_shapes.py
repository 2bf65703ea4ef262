"""Right-sizing on the real API server: the CPU-bound shapes spec fills `status.shapes[]`.

The spec is tests/e2e/specs/shapes-cpu-bound.yaml, the one `plimsoll run` measures in
tests/e2e/test_shapes_real.py, with only what a cluster needs added: an image for the
target pod, the target's file by its absolute path (the test kubelet runs it from its
own folder) and the Prometheus that scrapes the kubelet's cAdvisor names. The real
operator runs as the chart's ServiceAccount; each shape is its own target pod with
requests == limits, which the real scheduler binds to the test kubelet's node and the
kubelet pins in a cgroup of that shape.

`make e2e` proves the mechanics with two levels a shape, 5 requests/s (which every
shape carries) and 60 (over the 50 the largest can): each shape measured in its own
pod, `status.shapes[]` filled, the cheapest marked in status and in the Cheapest
column. `make truth` runs the spec's own search (about four minutes): every ceiling
within 10% of the target's analytic capacity for its shape (`bench.real_shapes`),
limited by CPU, and the analytically cheapest shape named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.real_shapes import ROOT, SPECS, judge, spec_of
from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden
from tests.controller.real_kubelet import RealKubelet
from tests.controller.test_apiserver_variants import columns, prometheus_for

pytestmark = pytest.mark.slow


def on_the_cluster(spec_file: Path, prometheus_url: str) -> dict[str, Any]:
    """The spec file's CapacityTest with the target's image, absolute command and metrics."""
    body: dict[str, Any] = yaml.safe_load(spec_file.read_text())
    target = body["spec"]["target"]
    target["image"] = "plimsoll-test/target:dev"  # the test kubelet runs the command as is
    target["command"] = [
        part if not part.endswith(".py") else str(ROOT / part) for part in target["command"]
    ]
    body["spec"]["metrics"] = {"prometheusUrl": prometheus_url, "scrapeInterval": "500ms"}
    return body


async def test_each_shape_is_measured_in_its_own_pod_and_the_cheapest_named(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    async with prometheus_for(node_kubelet, tmp_path) as prometheus:
        sa_operator.start(prometheus=prometheus.url)
        body = on_the_cluster(SPECS["cpu-bound"], prometheus.url)
        body["spec"]["search"] = {"strategy": "steps", "levels": [5, 60]}
        name = body["metadata"]["name"]
        await apiserver.apply(body)
        status = await wait_for(
            lambda: apiserver.phase_in(name, "Succeeded", "Failed"), 300, "a finished run"
        )
    assert node_kubelet.pinning.problem is None, node_kubelet.pinning.problem
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    shapes = status["shapes"]
    shown = json.dumps(shapes, indent=1)
    assert [s["name"] for s in shapes] == ["c1-m512mi", "c500m-m2gi", "c250m-m4gi"], shown
    assert [(s.get("ceiling"), s["limitedBy"]) for s in shapes] == [(5, "cpu")] * 3, shown
    # Equal ceilings: the cheapest is the shape whose pod costs least an hour.
    [cheapest] = [s["name"] for s in shapes if s["cheapest"]]
    assert status["cheapestShape"] == cheapest == "c250m-m4gi", shown
    assert (await columns(apiserver, name))["Cheapest"] == cheapest
    assert forbidden(sa_operator) == []
    assert node_kubelet.errors == []


async def test_the_cpu_bound_shapes_fill_status_shapes_with_analytic_ceilings(
    apiserver: ApiServer,
    node_kubelet: RealKubelet,
    sa_operator: OperatorProcess,
    tmp_path: Path,
    record_property: Any,
) -> None:
    async with prometheus_for(node_kubelet, tmp_path) as prometheus:
        sa_operator.start(prometheus=prometheus.url)
        body = on_the_cluster(SPECS["cpu-bound"], prometheus.url)
        name = body["metadata"]["name"]
        await apiserver.apply(body)
        status = await wait_for(
            lambda: apiserver.phase_in(name, "Succeeded", "Failed"), 600, "a finished run"
        )
    assert node_kubelet.pinning.problem is None, node_kubelet.pinning.problem
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    report_map = await apiserver.api.get(
        f"/api/v1/namespaces/{apiserver.namespace}/configmaps/{name}-report"
    )
    report = json.loads((report_map or {})["data"]["report.json"])
    for step in report["steps"]:  # a failure's log: each trial beside what explains it
        print(step["variant"], step["level"], step["judgement"]["verdict"], step["target"])
    judged = judge(spec_of("cpu-bound"), report)
    for row in judged.rows:
        print(f"{row.label}: analytic {row.analytic:.1f}, found {row.found}, error {row.error}")
        record_property(f"{row.name}_truth", round(row.analytic, 1))
        record_property(f"{row.name}_found", row.found)
        record_property(f"{row.name}_limited_by", row.limited_by)
    assert len(judged.rows) == 3
    assert all(row.within and row.limited_by == "cpu" for row in judged.rows), judged.rows
    # status.shapes[] carries the report's table, one row a shape, the cheapest marked.
    shapes = status["shapes"]
    assert [(s["name"], s.get("ceiling"), s["limitedBy"]) for s in shapes] == [
        (row.name, row.found, row.limited_by) for row in judged.rows
    ]
    assert [s["name"] for s in shapes if s["cheapest"]] == [judged.cheapest_analytic]
    assert status["cheapestShape"] == judged.cheapest_analytic == "c1-m512mi"
    assert (await columns(apiserver, name))["Cheapest"] == "c1-m512mi"
    assert forbidden(sa_operator) == []
    assert node_kubelet.errors == []
