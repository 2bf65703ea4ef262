"""The live view: a rich.Live panel on a terminal, plain lines in a log, report.json each step."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console

from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import CurrentStep, Phase
from plimsoll.api.step import Judgement, ResourceUsage, StepResult, Verdict
from plimsoll.api.timeline import TimelineSlice
from plimsoll.decide.search import noise_free_bound
from plimsoll.decide.step_summary import record_of
from plimsoll.report.live import ConsoleSink
from plimsoll.shared import histogram
from tests.localrun import short_cpu_test

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def result(
    index: int, level: int, verdict: Verdict, reasons: list[str] | None = None
) -> StepResult:
    return StepResult(
        index=index,
        level=level,
        started_at=T0 + timedelta(seconds=10 * index),
        ended_at=T0 + timedelta(seconds=10 * index + 5),
        duration=4.0,
        target=ResourceUsage(source="cgroup", cpu_mean_cores=0.02 * level, memory_max_bytes=2**24),
        judgement=Judgement(verdict=verdict, reasons=reasons or []),
    )


# A doubling search as the runner would report it: 8, 16 and 32 pass, 64 fails, 48 fails.
STEPS = [
    result(0, 8, Verdict.PASS),
    result(1, 16, Verdict.PASS),
    result(2, 32, Verdict.PASS),
    result(3, 64, Verdict.FAIL, ["p99 latency 812 ms > 500 ms"]),
    result(4, 48, Verdict.FAIL, ["p99 latency 640 ms > 500 ms"]),
]


async def drive(sink: ConsoleSink, test: CapacityTest) -> list[str]:
    """Feed the sink a run; the panel as drawn after each step (when it is live)."""
    panels = []
    await sink.phase(Phase.PROVISIONING, "starting the target, mock and generators (default)")
    await sink.phase(Phase.RUNNING, "searching for the ceiling (default)")
    for step in STEPS:
        await sink.step_started(
            CurrentStep(index=step.index, level=step.level, started_at=step.started_at)
        )
        await sink.step_finished(record_of(step), step)
        panels.append(snapshot(sink))
    report = RunReport(
        test_name=test.metadata.name,
        spec=test.spec,
        started_at=T0,
        platform="local",
        outcome=Outcome.SUCCEEDED,
        steps=STEPS,
        records=[record_of(step) for step in STEPS],
    )
    await sink.finished(report)
    return panels


def snapshot(sink: ConsoleSink, width: int = 110) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(sink.render())
    return console.export_text()


async def test_terminal_gets_a_live_panel_with_level_bracket_and_steps(tmp_path: Path) -> None:
    test = short_cpu_test()
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=110, color_system=None)
    sink = ConsoleSink(test, tmp_path, console=terminal)
    assert sink._live is not None  # a terminal: live

    await sink.step_started(CurrentStep(index=5, level=40))
    before = snapshot(sink)
    assert "step 5: level 40 rps (full trial, default)" in before

    panels = await drive(sink, test)
    assert "plimsoll run: cpu-bound" in panels[0]

    # The bracket narrows step by step, and the panel shows how it got there.
    assert "bracket 8 … —" in panels[0]
    assert "bracket 32 … 64" in panels[3]
    assert "bracket 32 … 48" in panels[4]
    assert "(was 8 … — → 16 … — → 32 … — → 32 … 64)" in panels[4]
    # The table of steps, verdicts and key figures.
    last = panels[4]
    for level, verdict in ((8, "pass"), (32, "pass"), (64, "fail"), (48, "fail")):
        assert any(f" {level} " in line and verdict in line for line in last.splitlines())
    assert "0.64" in last  # the CPU of the 32 step (0.02 cores per request/s)
    assert "p99 ms" in last
    output = screen.getvalue()
    # Reasons print above the panel; the panel goes at the end, and no 18-column table
    # replaces it (the run's end prints a table fitted to the terminal: run_end).
    assert "step 3 fail: p99 latency 812 ms > 500 ms" in output
    assert "starts nominal/scheduled/on time" not in output
    assert sink._live is not None
    assert not sink._live.is_started
    assert len(json.loads((tmp_path / "report.json").read_text())["steps"]) == 5


async def test_a_log_gets_plain_lines_and_no_panel(tmp_path: Path) -> None:
    test = short_cpu_test()
    log = io.StringIO()
    sink = ConsoleSink(test, tmp_path, console=Console(file=log, width=200, color_system=None))
    assert sink._live is None  # not a terminal: plain lines

    await drive(sink, test)
    lines = log.getvalue().splitlines()
    assert "step 3: level 64 rps (full trial, default) …" in lines
    assert (
        "  FAIL p50 ms —, p95 ms —, p99 ms —, errors —, achieved/s —, CPU 1.28, "
        in (lines[lines.index("step 3: level 64 rps (full trial, default) …") + 1][:75])
    )
    assert "    p99 latency 812 ms > 500 ms" in lines
    assert "  bracket [32 … 48]" in lines
    assert not any("\x1b[" in line for line in lines)  # no cursor movement in a log
    assert json.loads((tmp_path / "report.json").read_text())["outcome"] == "succeeded"


async def test_quiet_terminal_draws_nothing(tmp_path: Path) -> None:
    sink = ConsoleSink(short_cpu_test(), tmp_path, quiet=True)
    assert sink._live is None


def _slice(start: float, micros: int, sent: int, errors: int = 0) -> TimelineSlice:
    h = histogram.new_histogram()
    h.record_value(micros, sent - errors)
    return TimelineSlice(
        start=start,
        seconds=1.0,
        latency=histogram.encode(h),
        sent=sent,
        ok=sent - errors,
        errors=errors,
    )


async def test_mid_trial_the_panel_shows_the_figures_so_far_and_the_runs_progress(
    tmp_path: Path,
) -> None:
    """Each second the trial's slices come in (`trial_progress`, fed by the trial client):
    the panel shows the achieved rate, the bar's quantile so far and the errors, and the
    step of at most how many with the time left; at 80 columns every line fits."""
    test = short_cpu_test()  # passWhen: p99 below 500 ms; 1.5 s trials, 0.5 s warm-up
    terminal = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    sink = ConsoleSink(test, tmp_path, console=terminal)
    for step in STEPS[:2]:
        await sink.step_started(CurrentStep(index=step.index, level=step.level))
        await sink.step_finished(record_of(step), step)
    await sink.step_started(CurrentStep(index=2, level=32))
    warming = snapshot(sink, 80)
    assert "so far: nothing measured yet (warming up)" in warming

    sink.trial_progress([_slice(0.0, 20_000, 32), _slice(1.0, 20_000, 31, errors=1)])
    panel = snapshot(sink, 80)
    flat = " ".join(line.strip("│ ") for line in panel.splitlines())  # as read, unwrapped
    assert "so far (2 s measured): 31.5/s achieved, p99 20.0 ms (all operations), " in flat
    assert "1 error (1.59%)" in flat
    bound = min(noise_free_bound(test.spec.search), test.spec.search.max_trials)
    assert f"2 of at most {bound} steps done, about " in flat
    assert " left at most" in flat
    too_long = [line for line in panel.splitlines() if len(line) > 80]
    assert not too_long, "\n".join(too_long)

    await sink.step_finished(record_of(STEPS[2]), STEPS[2])
    assert sink.so_far is None  # a new trial starts from nothing


async def test_a_log_gets_no_figures_each_second(tmp_path: Path) -> None:
    sink = ConsoleSink(short_cpu_test(), tmp_path, console=Console(file=io.StringIO(), width=200))
    sink.trial_progress([_slice(0.0, 20_000, 32)])
    assert sink.so_far is None
