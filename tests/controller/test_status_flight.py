"""An autoscaler flight puts its figures in the status (`status.autoscaling`): held or
not, the lag, the seconds over the bar, what failed, the recommended HPA and whether it
held when flown; the real `OperatorSink` writes to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json

from plimsoll.api.autoscale import (
    Autoscaler,
    FlightResult,
    PodLag,
    RecommendedHpa,
    proof_variant_name,
)
from plimsoll.api.report import Outcome
from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.api.step import Verdict
from plimsoll.controller.status import OperatorSink, StatusWriter
from plimsoll.kube.client import KubeClient
from tests.kube.flaky_server import FlakyServer
from tests.reportfixtures import Run, make_report

OWNER = {"metadata": {"name": "burst", "namespace": "perf", "uid": "u-1"}}


async def test_the_flight_and_its_proven_recommendation_reach_the_status(
    server: FlakyServer,
) -> None:
    proof = proof_variant_name("default")
    report = make_report(
        {
            "default": Run(None, 45, [(45, Verdict.FAIL, 0.1)]),
            proof: Run(45, None, [(45, Verdict.PASS, 0.1)]),
        }
    )
    report.outcome = Outcome.SUCCEEDED
    settings = Autoscaler(min_replicas=2, max_replicas=7, target_cpu_utilization=28)
    advice = RecommendedHpa(
        autoscaler=settings,
        share_of_ceiling=0.3,
        load_per_pod=7.5,
        lag_s=11.2,
        pod_start_s=1.2,
        cpu_at_ceiling=0.94,
    )
    first = FlightResult(
        profile="a burst",
        lags=[PodLag(replicas=2, lag_s=9.0), PodLag(replicas=3, lag_s=24.0)],
        time_to_capacity_s=30.0,
        seconds_over_bar=22.0,
        sent=2000,
        failed=8,
        start_replicas=1,
        peak_replicas=3,
        sentence="a burst: 1 → 3 pods in 24 s; it did not hold",
        recommendation=advice,
        controller="cluster",
    )
    second = FlightResult(profile="a burst", held=True, sentence="it held", controller="cluster")
    report.steps = [
        step.model_copy(update={"flight": first if step.variant == "default" else second})
        for step in report.steps
    ]
    client = KubeClient(server.url)
    writer = StatusWriter(client, "perf", "burst", CapacityTestStatus(phase=Phase.RUNNING))
    try:
        await OperatorSink(writer, OWNER).finished(report)
    finally:
        await client.aclose()
    sent = json.loads(server.bodies[-1])["status"]["autoscaling"]
    assert sent["held"] is False
    assert sent["verdict"] == "did not hold"
    assert sent["lagSeconds"] == 24.0  # the last pod's
    assert (sent["timeToCapacitySeconds"], sent["secondsOverBar"]) == (30.0, 22.0)
    assert (sent["failed"], sent["failedPercent"]) == (8, 0.4)
    assert sent["replicas"] == "1 -> 3"
    assert sent["controller"] == "cluster"
    assert sent["recommended"]["targetCpuUtilization"] == 28
    assert sent["recommendedHeld"] is True


async def test_a_run_without_a_flight_has_no_autoscaling_status(server: FlakyServer) -> None:
    report = make_report({"default": Run(level=600, high=None)})
    report.outcome = Outcome.SUCCEEDED
    client = KubeClient(server.url)
    writer = StatusWriter(client, "perf", "edge", CapacityTestStatus(phase=Phase.RUNNING))
    try:
        await OperatorSink(writer, OWNER).finished(report)
    finally:
        await client.aclose()
    assert "autoscaling" not in json.loads(server.bodies[-1])["status"]
