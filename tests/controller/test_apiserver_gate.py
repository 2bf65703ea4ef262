"""The regression gate on the real API server: a run whose ceiling lies below its
baseline, beyond noise, ends Succeeded *and* Regressed, with the numbers in the
condition, a Warning Event, the Change column and its place in status.history.

The baseline is a fixed level the target cannot reach, so the verdict does not depend
on a first run: 20 rps passes and 150 rps fails (a quarter of a core, 4 ms a request),
a band of 20..150 against 1,000.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow


async def test_a_ceiling_below_its_baseline_is_regressed_in_status_events_and_columns(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        sa_operator.start(prometheus=prometheus.url)
        body = quickstart("gate", prometheus.url, levels=[20, 150])
        body["spec"]["target"]["resources"]["cpu"] = "250m"
        body["spec"]["target"]["env"]["WORK_MS"] = "4"
        body["spec"]["regression"] = {"baseline": "1000", "threshold": "10%"}
        await apiserver.apply(body)
        status = await wait_for(
            lambda: apiserver.phase_in("gate", "Succeeded", "Failed"), 120, "a finished run"
        )
    finally:
        prometheus.stop()
    shown = json.dumps(status, indent=1)
    assert status["phase"] == "Succeeded", shown + sa_operator.log()
    assert status["ceiling"]["level"] == 20, shown
    [verdict] = status["regression"]
    assert verdict["regressed"] is True, shown
    assert (verdict["baseline"], verdict["current"]) == (1000, 20)
    assert status["change"] == "-98% REGRESSED"
    conditions = {c["type"]: c for c in status["conditions"]}
    regressed = conditions["Regressed"]
    assert (regressed["status"], regressed["reason"]) == ("True", "Regressed")
    assert "20 rps vs 1000 rps (fixed level), -98%: regressed" in regressed["message"]
    assert [e["runId"] for e in status["history"]] == [status["runId"]]

    events = await apiserver.events("gate")
    [warning] = [e for e in events if e["reason"] == "Regressed"]
    assert warning["type"] == "Warning"
    assert "-98%: regressed" in warning["message"]

    table = apiserver.plane.kubectl(
        "get", "capacitytest", "gate", "-n", apiserver.namespace
    ).stdout.splitlines()
    header, row = table[0].split(), table[1].split()
    assert row[header.index("CHANGE")] == "-98%"  # the column's value, then the flag
    assert "REGRESSED" in table[1]
