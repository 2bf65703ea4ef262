"""report.md shows time to first token and added latency per step, for operations that
measured them, and nothing for those that did not."""

import pytest

from plimsoll.api.trial import OperationResult, TrialResult, TrialState
from plimsoll.report.markdown import render_markdown
from plimsoll.report.streamed import streamed_rows
from tests.reportfixtures import Run, encoded_seconds, ladder, make_report


def test_ttft_and_added_per_step_and_operation() -> None:
    report = make_report({"default": Run(level=50, high=100, steps=ladder(50, 100, 0.001))})
    step = report.steps[0]
    step.client = TrialResult(
        id="t",
        state=TrialState.DONE,
        level=step.level,
        operations={
            "chat": OperationResult(
                latency=encoded_seconds(2.3, 2.3),
                ttft=encoded_seconds(*[0.8] * 19, 0.9),
                added=encoded_seconds(*[0.005] * 97, 0.02, 0.02, 0.02),
            ),
            "plain": OperationResult(latency=encoded_seconds(0.01)),
        },
    )
    [chat] = streamed_rows(step)
    assert chat[:4] == ["0", "default", "25", "chat"]
    figures = [float(cell.replace(",", "")) for cell in chat[4:]]
    # TTFT p50 and p95 (19 of 20 at 800 ms), added p50 and p99 (the three slow ones), within
    # the histograms' 0.1% resolution.
    assert figures == pytest.approx([800, 800, 5, 20], rel=1e-3)
    section = render_markdown(report).split("## Time to first token and added latency")[1]
    assert "| " + " | ".join(chat) + " |" in section
    assert "plain" not in section.split("\n## ")[0]


def test_no_streamed_operation_no_section() -> None:
    report = make_report({"default": Run(level=50, high=100, steps=ladder(50, 100, 0.001))})
    assert "## Time to first token" not in render_markdown(report)
