"""report.md's autoscaler flight section (issue 57): the flight's figures and its
replicas over time, from the step that flew it; nothing for a run without one."""

from __future__ import annotations

from plimsoll.api.autoscale import FlightResult, PodLag, ReplicaCount
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


def test_no_flight_no_section() -> None:
    report = make_report({"default": Run(400, 440)})
    assert flight_markdown(report) == ""
    assert "Autoscaler flight" not in render_markdown(report)
