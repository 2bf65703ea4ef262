"""report.json round-trips, and report.md and the charts render from it (`plimsoll report`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.status import Ceiling, Headroom
from plimsoll.api.step import Judgement, LimitedBy, ResourceUsage, StepResult, Verdict
from plimsoll.api.trial import OperationResult, Outcomes, TrialResult, TrialState
from plimsoll.cli.app import app
from plimsoll.decide.step_summary import record_of
from plimsoll.report.files import write_json
from plimsoll.report.sentence import ceiling_sentence
from plimsoll.shared import histogram
from tests.localrun import short_cpu_test


def _step(index: int, level: int, verdict: Verdict, latency: float, memory: int) -> StepResult:
    hist = histogram.new_histogram()
    for i in range(200):
        histogram.record_seconds(hist, latency * (1 + i / 200))
    start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=10 * index)
    client = TrialResult(
        id=str(index),
        state=TrialState.DONE,
        level=level,
        sent=level * 5,
        measured_seconds=5,
        operations={
            "work": OperationResult(latency=histogram.encode(hist), outcomes=Outcomes(ok=level * 5))
        },
    )
    target = ResourceUsage(
        source="cgroup",
        cpu_mean_cores=0.02 * level,
        memory_max_bytes=memory,
        cpu_limit_cores=0.5,
        memory_limit_bytes=64 * 2**20,
    )
    return StepResult(
        index=index,
        level=level,
        started_at=start,
        ended_at=start,
        duration=5,
        client=client,
        target=target,
        judgement=Judgement(verdict=verdict),
    )


def _report() -> RunReport:
    ceiling = Ceiling(
        level=20,
        unit="rps",
        low=20,
        high=24,
        limited_by=LimitedBy.CPU,
        headroom=Headroom(memory_free_bytes=6 * 2**20, cpu_idle_fraction=0.3),
        complete=True,
    )
    steps = [
        _step(0, 10, Verdict.PASS, 0.02, 20 * 2**20),
        _step(1, 20, Verdict.PASS, 0.04, 22 * 2**20),
        _step(2, 24, Verdict.FAIL, 0.9, 23 * 2**20),
    ]
    return RunReport(
        test_name="cpu-bound",
        spec=short_cpu_test().spec,
        started_at=datetime.now(UTC),
        platform="local",
        pinned=True,
        outcome=Outcome.SUCCEEDED,
        ceiling=ceiling,
        ceilings=[ceiling],
        steps=steps,
        records=[record_of(step) for step in steps],
    )


# An asyncio writer left open by an earlier test in the same worker is collected here (not
# found yet: see the stop-36 note); the warning is not this test's. Remove once it is found.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_sentence_reads_like_the_seeds() -> None:
    report = _report()
    assert ceiling_sentence(report, report.ceilings[0], report.spec) == (
        "0.5 CPU / 128 MiB sustains 20 requests per second; cpu limited it, "
        "6.0 MiB under the limit with 30% CPU idle."
    )


def test_report_command_renders_markdown_and_charts(tmp_path: Path) -> None:
    path = write_json(_report(), tmp_path)
    result = CliRunner().invoke(app, ["report", str(path)])
    assert result.exit_code == 0, result.output
    markdown = (tmp_path / "report.md").read_text()
    assert "| default | 20 rps | 20 … 24 |" in markdown
    assert "at most 4 noisy or marginal trials a level |" in markdown  # the bound
    assert "| 2 | default | 24 |" in markdown
    for name in ("latency.png", "latency.svg", "resources.png", "resources.svg"):
        assert (tmp_path / name).stat().st_size > 1000
    assert RunReport.model_validate_json(path.read_text()).ceiling == _report().ceiling


def test_report_command_rejects_other_json(tmp_path: Path) -> None:
    other = tmp_path / "x.json"
    other.write_text('{"hello": 1}')
    assert CliRunner().invoke(app, ["report", str(other)]).exit_code == 2


def test_a_run_with_no_passing_level_says_so_once_and_prints_no_none_rps(tmp_path: Path) -> None:
    report = _report()
    nothing = Ceiling(level=None, unit="rps", high=20, complete=True, stop_reason="no level passed")
    report.ceilings = [nothing]
    assert ceiling_sentence(report, nothing, report.spec) == (
        "0.5 CPU / 128 MiB passed no level: even the lowest level tried, 20 rps, failed."
    )
    write_json(report, tmp_path)
    assert CliRunner().invoke(app, ["report", str(tmp_path / "report.json")]).exit_code == 0
    markdown = (tmp_path / "report.md").read_text()
    assert "| default | no level passed |" in markdown
    assert "none rps" not in markdown
    assert "No step found the host busy." in markdown


def test_an_inconclusive_run_claims_no_ceiling() -> None:
    report = _report()
    busy = Ceiling(
        level=10,
        unit="rps",
        low=10,
        high=None,
        complete=False,
        inconclusive=True,
        stop_reason="inconclusive: the host was busy (step 3 at level 20 was noisy 4 times)",
    )
    assert ceiling_sentence(report, busy, report.spec) == (
        "0.5 CPU / 128 MiB: inconclusive: the host was busy (step 3 at level 20 was noisy "
        "4 times); no ceiling; 10 requests per second passed before that, a lower bound only."
    )


def test_report_md_names_busy_steps_and_the_contention_figures_it_could_not_read() -> None:
    from plimsoll.api.step import Contention
    from plimsoll.report.markdown import render_markdown

    report = _report()
    unread = "target CPU wait: not readable from prometheus (no schedstat or cpu.pressure series)"
    report.steps[1].contention = Contention(busy=True, signals=["x"], unreadable=[unread])
    report.steps[2].contention = Contention(unreadable=[unread])
    markdown = render_markdown(report)
    assert "The host was busy during step(s) 1:" in markdown
    assert f"Not checked, because it could not be read: {unread}." in markdown


def test_a_run_whose_every_level_passed_says_at_least_and_names_no_resource(
    tmp_path: Path,
) -> None:
    report = _report()
    above = Ceiling(
        level=320,
        unit="rps",
        low=320,
        high=None,
        limited_by=LimitedBy.UNKNOWN,
        complete=False,
        every_level_passed=True,
        stop_reason="every level passed",
        basis="passed 1 of 1",
    )
    assert ceiling_sentence(report, above, report.spec) == (
        "0.5 CPU / 128 MiB sustains at least 320 requests per second (every level passed; "
        "passed 1 of 1): no level failed above it, so nothing shows where it stops or what "
        "limits it."
    )
    report.ceilings = [above]
    write_json(report, tmp_path)
    assert CliRunner().invoke(app, ["report", str(tmp_path / "report.json")]).exit_code == 0
    assert "| default | at least 320 rps | 320 … — |" in (tmp_path / "report.md").read_text()
