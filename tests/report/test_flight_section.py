"""report.md's autoscaler flight section (issue 57): the flight's figures and its
replicas over time, from the step that flew it; nothing for a run without one."""

from __future__ import annotations

from plimsoll.api.autoscale import (
    Autoscaler,
    FlightResult,
    PodLag,
    RecommendedHpa,
    ReplicaCount,
    proof_variant_name,
)
from plimsoll.api.step import Verdict
from plimsoll.report.flight import flight_markdown
from plimsoll.report.markdown import render_markdown
from tests.reportfixtures import Run, make_report


def test_a_flight_in_figures() -> None:
    report = make_report({"default": Run(None, 45, [(45, Verdict.FAIL, 0.1)])})
    flight = FlightResult(
        profile="12 rps for 10 s, to 45 at once for 20 s",
        short_at=10,
        lags=[PodLag(replicas=2, lag_s=6)],
        time_to_capacity_s=9,
        seconds_over_bar=7,
        sent=1020,
        failed=3,
        start_replicas=1,
        peak_replicas=3,
        sentence="12 rps for 10 s, to 45 at once for 20 s: 1 → 3 pods in 6 s; it did not hold",
        replicas=[
            ReplicaCount(at=0, ready=1, desired=1),
            ReplicaCount(at=15, ready=1, desired=2),
            ReplicaCount(at=16, ready=2, desired=2),
        ],
    )
    report.steps[0] = report.steps[0].model_copy(update={"flight": flight})
    section = flight_markdown(report)
    assert section.startswith("## Autoscaler flight")
    assert "| short of capacity at | 10 s |" in section
    assert "| replicas serving (lag from short of capacity) | 2 in 6 s |" in section
    assert "| p99 over the bar | 7 s |" in section
    assert "| requests failed | 3 of 1,020 (0.29%) |" in section
    assert "0 s: 1/1; 15 s: 1/2; 16 s: 2/2" in section
    assert "## Autoscaler flight" in render_markdown(report)


def test_the_recommended_hpa_as_a_manifest_and_the_flight_that_proved_it() -> None:
    proof = proof_variant_name("default")
    report = make_report(
        {
            "default": Run(None, 45, [(45, Verdict.FAIL, 0.1)]),
            proof: Run(45, None, [(45, Verdict.PASS, 0.1)]),
        }
    )
    settings = Autoscaler(min_replicas=2, max_replicas=7, target_cpu_utilization=28)
    advice = RecommendedHpa(
        autoscaler=settings,
        share_of_ceiling=0.3,
        load_per_pod=7.5,
        lag_s=11.2,
        pod_start_s=1.2,
        cpu_at_ceiling=0.94,
        reasons=["a new pod serves 11 s after the load starts to grow"],
    )
    first = FlightResult(profile="a burst", sentence="it did not hold", recommendation=advice)
    second = FlightResult(profile="a burst", held=True, sentence="2 pods throughout; it held")
    report.steps = [
        step.model_copy(update={"flight": first if step.variant == "default" else second})
        for step in report.steps
    ]
    section = flight_markdown(report)
    assert "**Recommended HPA**: 2-7 replicas at 28% CPU" in section
    assert "took 1.2 s to serve" in section
    assert "kind: HorizontalPodAutoscaler" in section
    assert f"name: {report.test_name}" in section
    assert "Flown again under it: held. 2 pods throughout; it held" in section


def test_a_flight_that_could_not_recommend_says_why() -> None:
    report = make_report({"default": Run(None, 45, [(45, Verdict.FAIL, 0.1)])})
    flight = FlightResult(profile="a burst", no_recommendation="no replica started")
    report.steps[0] = report.steps[0].model_copy(update={"flight": flight})
    assert "No HPA recommended: no replica started." in flight_markdown(report)


def test_no_flight_no_section() -> None:
    report = make_report({"default": Run(400, 440)})
    assert flight_markdown(report) == ""
    assert "Autoscaler flight" not in render_markdown(report)


def _flown_by(controller: str) -> str:
    report = make_report({"default": Run(None, 45, [(45, Verdict.FAIL, 0.1)])})
    target = report.spec.target.model_copy(
        update={"autoscaler": Autoscaler(max_replicas=4, target_cpu_utilization=60)}
    )
    report.spec = report.spec.model_copy(update={"target": target})
    flight = FlightResult(profile="a burst", sentence="it held", held=True, controller=controller)
    report.steps[0] = report.steps[0].model_copy(update={"flight": flight})
    return flight_markdown(report)


def test_the_section_says_who_scaled_the_simulation_or_the_clusters_controller() -> None:
    assert "made by Plimsoll on this machine (simulated" in _flown_by("simulated")
    cluster = _flown_by("cluster")
    assert "The cluster's HPA controller scaled a Deployment of the target" in cluster
    assert "simulated" not in cluster
