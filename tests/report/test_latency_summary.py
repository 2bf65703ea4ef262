"""The run summary per step and operation (`report.latency_summary`): requests, success,
throughput, and mean/min/max beside the quantiles, from the step's own histogram."""

import pytest

from plimsoll.api.report import RunReport
from plimsoll.api.step import StepResult
from plimsoll.api.trial import OperationResult, Outcomes, TrialResult, TrialState
from plimsoll.report.html import render_html
from plimsoll.report.latency_summary import SUMMARY_COLUMNS, summary_rows
from plimsoll.report.markdown import render_markdown
from tests.reportfixtures import Run, encoded_seconds, ladder, make_report


def _report_with_one_step_measured() -> tuple[RunReport, StepResult]:
    report = make_report({"default": Run(level=50, high=100, steps=ladder(50, 100, 0.001))})
    step = report.steps[0]
    step.client = TrialResult(
        id="t",
        state=TrialState.DONE,
        level=step.level,
        measured_seconds=20.0,
        operations={
            # 100 answers: 97 at 10 ms, one at 2 ms, two at 400 ms; 98 ok of 100
            "chat": OperationResult(
                latency=encoded_seconds(*[0.010] * 97, 0.002, 0.4, 0.4),
                outcomes=Outcomes(ok=98, transport=1, unexpected=1),
            ),
            "idle": OperationResult(latency=encoded_seconds()),
        },
    )
    return report, step


def test_a_steps_summary_gives_requests_success_rate_and_mean_min_max() -> None:
    _, step = _report_with_one_step_measured()
    chat, idle = summary_rows(step)
    assert len(chat) == len(SUMMARY_COLUMNS)
    assert chat[:8] == ["0", "default", "25", "chat", "100", "98.00%", "20.0", "5.0"]
    mean, low, p50, p95, p99, high = (float(c.replace(",", "")) for c in chat[8:])
    # (97 × 10 + 2 + 2 × 400) / 100 = 17.72 ms; within the histogram's 0.1% resolution.
    assert mean == pytest.approx(17.72, rel=2e-3)
    assert (low, p50, p95, high) == pytest.approx((2, 10, 10, 400), rel=2e-3)
    assert p99 == pytest.approx(400, rel=2e-3)
    assert idle[4:] == ["0", "—", "20.0", "0.0", "—", "—", "—", "—", "—", "—"]


def test_the_summary_is_in_both_reports_and_absent_without_a_client() -> None:
    report, step = _report_with_one_step_measured()
    [chat, _] = summary_rows(step)
    markdown = render_markdown(report).split("## Requests and latency in full")[1]
    assert "| " + " | ".join(chat) + " |" in markdown.split("\n## ")[0]
    assert "Requests and latency in full" in render_html(report)
    assert all(summary_rows(other) == [] for other in report.steps[1:])
