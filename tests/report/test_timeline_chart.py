"""Each full step's timeline is drawn, and a drifting step's note reaches report.md."""

from __future__ import annotations

from pathlib import Path

from plimsoll.decide.steadiness import steadiness
from plimsoll.report.files import read_report, write_json, write_report
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
