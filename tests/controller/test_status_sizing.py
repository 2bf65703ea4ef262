"""A run with spec.sizing puts its plan, compacted, in the resource's status.

The real `OperatorSink` and `StatusWriter` write to a real HTTP server on
127.0.0.1; the status the server receives carries the plan's few numbers, and
not its derivation lines (those stay in the report)."""

from __future__ import annotations

import json

from plimsoll.api.report import Outcome
from plimsoll.api.sizing import SizingSpec
from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.controller.status import OperatorSink, StatusWriter
from plimsoll.decide.sizing import plan_deployment
from plimsoll.decide.sizing_costs import resolve
from plimsoll.kube.client import KubeClient
from tests.kube.flaky_server import FlakyServer
from tests.reportfixtures import Run, make_report

OWNER = {"metadata": {"name": "edge", "namespace": "perf", "uid": "u-1"}}


async def test_the_plan_reaches_the_status_compacted(server: FlakyServer) -> None:
    report = make_report({"default": Run(level=10600, high=12000)})
    report.outcome = Outcome.SUCCEEDED
    report.spec.sizing = SizingSpec(
        peak=20000, growth=2, zones=3, streams=10000, upstream_latency="200ms", busiest_client=300
    )
    report.sizing = plan_deployment(
        resolve(report.spec.sizing, report, {}, costs=report.unit_costs)
    )
    client = KubeClient(server.url)
    writer = StatusWriter(client, "perf", "edge", CapacityTestStatus(phase=Phase.RUNNING))
    try:
        await OperatorSink(writer, OWNER).finished(report)
    finally:
        await client.aclose()
    sent = json.loads(server.bodies[-1])["status"]
    assert sent["sizing"] == {
        "pods": 12,
        "podsPerZone": 4,
        "inFlightCap": 2000,
        "streamCap": 2500,
        "backstopPerSecond": 1000,
    }
    assert "derivation" not in json.dumps(sent)
