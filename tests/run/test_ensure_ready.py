"""Before every trial the runner asks the platform whether the target is ready.

The target is killed between two steps, as an OOM kill or a crash would end it.
The local platform's restarter brings it back, and the next step must wait for
that (a trial started against a target that is still restarting measures
refused connections, not capacity). A target that cannot come back stops the run
with its last log lines, and the steps measured so far are kept. Real target,
mock and generator processes on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.step import StepRecord, StepResult, Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, RecordingSink, marked_processes, one_level_test

pytestmark = pytest.mark.usefixtures("mark")

CPU_BOUND = ROOT / "examples" / "targets" / "cpu_bound.py"


def restarting_target(marker: Path, on_restart: str) -> dict[str, object]:
    """The cpu-bound target behind a wrapper that runs `on_restart` (shell) when started a
    second time: sleep before serving, or refuse."""
    script = (
        f'if [ -e "{marker}" ]; then {on_restart}; fi; touch "{marker}"; '
        f'exec {sys.executable} "{CPU_BOUND}"'
    )
    return {
        "command": ["sh", "-c", script],
        "portEnv": "PORT",
        "env": {"WORK_MS": "2"},
        "resources": {"cpu": "0.5", "memory": "128Mi"},
        "startupTimeout": "20s",
    }


class KillAfterFirstStep(RecordingSink):
    """Kills the target's process group once the first step is judged, and waits until
    it has exited, so the runner's next move meets a dead target."""

    def __init__(self, platforms: list[LocalPlatform]) -> None:
        super().__init__()
        self.platforms = platforms
        self.killed_pid: int | None = None

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        await super().step_finished(record, result)
        if record.index != 0:
            return
        target = next(p for p in self.platforms[0].processes if p.name == "target")
        self.killed_pid = target.pid
        assert target.pid is not None
        os.killpg(target.pid, signal.SIGKILL)
        for _ in range(100):  # exited, or already being started again by the restarter
            if target.returncode is not None or target.pid != self.killed_pid:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the killed target did not exit")


async def kill_after_first_step(
    tmp_path: Path, mark: str, on_restart: str
) -> tuple[RunReport, KillAfterFirstStep, LocalPlatform]:
    """Two steps (5 and 6 rps) against the wrapped target, killed after the first."""
    platforms: list[LocalPlatform] = []

    def make(variant: object) -> LocalPlatform:
        platforms.append(LocalPlatform(f"t-{mark[:6]}", tmp_path))
        return platforms[-1]

    test = one_level_test("restarts", restarting_target(tmp_path / "started-once", on_restart))
    test.spec.search.levels = [5, 6]
    sink = KillAfterFirstStep(platforms)
    report = await run_test(test, make, sink)
    return report, sink, platforms[0]


async def test_the_next_step_waits_until_the_restarted_target_is_ready(
    tmp_path: Path, mark: str
) -> None:
    # The restart takes 2 s, longer than the 0.3 s warm-up: a step that did not wait
    # would meet refused connections for most of its measured window.
    report, sink, platform = await kill_after_first_step(tmp_path, mark, "sleep 2")

    assert [(r.level, r.verdict) for r in sink.records] == [(5, Verdict.PASS), (6, Verdict.PASS)]
    second = report.steps[1].client
    assert second is not None
    assert second.errors == []  # no refused connection: it met a ready target
    restarted = next(p for p in platform.processes if p.name == "target")
    assert restarted.pid != sink.killed_pid  # the step measured the new process
    assert report.outcome is Outcome.SUCCEEDED
    assert marked_processes(mark) == []


async def test_a_target_that_cannot_come_back_stops_the_run_with_its_last_words(
    tmp_path: Path, mark: str
) -> None:
    refuse = "echo 'store is locked by another writer'; exit 3"
    report, sink, _ = await kill_after_first_step(tmp_path, mark, refuse)

    assert [(r.level, r.verdict) for r in sink.records] == [(5, Verdict.PASS)]
    assert report.outcome is Outcome.FAILED
    ceiling = report.ceilings[0]
    assert not ceiling.complete
    assert ceiling.low == 5  # the step measured before the target died is kept
    assert "store is locked by another writer" in ceiling.stop_reason
    assert len(report.steps) == 1
    assert marked_processes(mark) == []
