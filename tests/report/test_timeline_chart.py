"""Each full step's timeline is drawn, and a drifting step's note reaches report.md; a
fault is marked where it fired; a flight's offered load and replicas are drawn."""

from __future__ import annotations

from pathlib import Path

from plimsoll.api.autoscale import FlightResult, ProfilePhase, ReplicaCount
from plimsoll.api.faults import FaultOutcome
from plimsoll.api.report import RunReport
from plimsoll.api.step import StepResult
from plimsoll.decide.steadiness import steadiness
from plimsoll.report.files import read_report, write_json, write_report
from plimsoll.report.html_timeline_chart import timeline_chart
from plimsoll.report.timeline_chart import (
    LOG_SCALE_RATIO,
    offered_rates,
    replica_counts,
    scale_events,
    timeline_figure,
)
from plimsoll.shared.timeline import points
from tests.report.test_report_files import _report
from tests.timelinefixtures import known_timeline


def test_a_drifting_step_is_drawn_and_noted(tmp_path: Path) -> None:
    report = _report()
    drifting = report.steps[1]
    assert drifting.client is not None
    drifting.client.timeline = known_timeline(
        [2, 2, 3, 4, 5, 6, 7, 8, 9], [0, 0, 0, 0, 4, 0, 0, 0, 0]
    )
    drifting.steadiness = steadiness([p.p99_ms for p in points(drifting.client.timeline)])
    steady = report.steps[0]
    assert steady.client is not None
    steady.client.timeline = known_timeline([2] * 9, [0] * 9)
    steady.steadiness = steadiness([p.p99_ms for p in points(steady.client.timeline)])

    write_json(report, tmp_path)
    again = read_report(tmp_path / "report.json")
    assert again.steps[1].client is not None
    assert again.steps[1].client.timeline == drifting.client.timeline  # kept in report.json
    written = {path.name for path in write_report(again, tmp_path)}
    assert {"timeline-step-0.png", "timeline-step-1.svg"} <= written
    assert "timeline-step-2.png" not in written  # a step without a timeline draws none
    assert (tmp_path / "timeline-step-1.png").stat().st_size > 1000
    markdown = (tmp_path / "report.md").read_text()
    assert "- step 1: not steady: p99 rose through the trial from 2" in markdown
    assert "step 0: not steady" not in markdown
    assert "![timeline-step-1.png](timeline-step-1.png)" in markdown


def test_a_fault_is_a_dotted_line_and_a_far_bar_puts_the_latency_on_a_log_axis() -> None:
    report = _report()
    step = report.steps[0]
    assert step.client is not None
    step.client.timeline = known_timeline([2, 2, 2, 9, 3, 2, 2, 2, 2], [0, 0, 0, 4, 0, 0, 0, 0, 0])
    step.faults = [FaultOutcome(fault="zone a lost at 3 s", at=3.0, recovery_s=1.0, held=True)]
    bar_ms = max(b.below * 1000 for b in report.spec.pass_when.latency)
    assert bar_ms > LOG_SCALE_RATIO * 9  # the fixture's bar is far above a 9 ms spike
    latency_axes, rate_axes = timeline_figure(report, step).axes
    assert latency_axes.get_yscale() == "log"
    labels = latency_axes.get_legend_handles_labels()[1]
    assert "zone a lost at 3 s" in labels
    assert "until p99 was back within the bar" in labels
    lines_at = [line.get_xdata()[0] for line in rate_axes.get_lines()[:1]]
    assert lines_at == [3.0]  # the fault's line on the rate axes too

    step.faults = []
    report.spec.pass_when.latency[0].below = 0.02  # 20 ms: near the data
    assert timeline_figure(report, step).axes[0].get_yscale() == "linear"


def _flight_step() -> tuple[RunReport, StepResult]:
    """A flight at 40/s: 10 for 4 s, then 40; one replica wanted two at 5 s, served at 6."""
    report = _report()
    profile = [ProfilePhase(level=10, hold=4), ProfilePhase(level=40, hold=5)]
    workload = report.spec.workload.model_copy(update={"profile": profile})
    report.spec = report.spec.model_copy(update={"workload": workload})
    step = report.steps[0].model_copy(update={"level": 40})
    assert step.client is not None
    step.client.timeline = known_timeline([2] * 9, [0] * 9)
    step.flight = FlightResult(
        profile="10/s for 4 s, to 40 at once for 5 s",
        replicas=[
            ReplicaCount(at=0, ready=1, desired=1),
            ReplicaCount(at=5, ready=1, desired=2),
            ReplicaCount(at=6, ready=2, desired=2),
        ],
    )
    report.steps[0] = step
    return report, step


def test_a_flight_draws_the_offered_load_and_the_replicas_with_each_scale_event() -> None:
    report, step = _flight_step()
    assert step.client is not None
    assert offered_rates(report, step, points(step.client.timeline)) == [10.0] * 4 + [40.0] * 5
    assert replica_counts(step, 9.0) == ([0, 5, 6, 9.0], [1, 1, 2, 2], [1, 2, 2, 2])
    assert scale_events(step) == [(5, 2)]  # a change of the ready count alone is no event
    _, rate_axes, replica_axes = timeline_figure(report, step).axes
    assert "offered" in rate_axes.get_legend_handles_labels()[1]
    assert replica_axes.get_ylabel() == "replicas"
    assert {"ready", "wanted", "scale event"} <= set(replica_axes.get_legend_handles_labels()[1])
    # Any other step has neither.
    plain = report.steps[1]
    assert offered_rates(report, plain, []) == []
    assert replica_counts(plain, 9.0) == ([], [], [])


def test_the_page_draws_a_flights_replicas_in_a_row_of_their_own() -> None:
    report, step = _flight_step()
    chart = timeline_chart(report, step)
    names = {trace.name for trace in chart.figure.data}
    assert {"offered", "ready", "wanted", "scale event"} <= names
    titles = [a.text for a in chart.figure.layout.annotations]
    assert "replicas" in titles
