"""The runner on the local platform when things go wrong: nothing measured is lost, and no
process is left behind. Real target, mock and generator processes on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.spec import Variant
from plimsoll.api.status import CurrentStep, Phase
from plimsoll.api.step import Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from tests.localrun import RecordingSink, marked_processes, short_cpu_test

pytestmark = pytest.mark.usefixtures("mark")


class CrashingSink(RecordingSink):
    """Kills the generator half a second into the second step."""

    def __init__(self, platforms: list[LocalPlatform]) -> None:
        super().__init__()
        self.platforms = platforms

    async def step_started(self, step: CurrentStep) -> None:
        await super().step_started(step)
        if step.index == 1:
            generator = next(p for p in self.platforms[0].processes if p.name == "generator")
            loop = asyncio.get_running_loop()
            loop.call_later(0.5, os.killpg, generator.pid, signal.SIGKILL)


async def test_generator_crash_is_invalid_retried_once_then_reports_the_range(
    tmp_path: Path, mark: str
) -> None:
    platforms: list[LocalPlatform] = []

    def make(variant: Variant | None) -> LocalPlatform:
        platforms.append(LocalPlatform(f"t-{mark[:6]}", tmp_path))
        return platforms[-1]

    sink = CrashingSink(platforms)
    report = await run_test(short_cpu_test(), make, sink)

    verdicts = [(r.level, r.verdict, r.attempt) for r in sink.records]
    assert verdicts[0] == (8, Verdict.PASS, 1)
    assert verdicts[1][1] is Verdict.INVALID
    assert verdicts[2][1] is Verdict.INVALID
    assert verdicts[2][2] == 2
    assert verdicts[1][0] == verdicts[2][0]
    assert len(verdicts) == 3
    assert report.outcome is Outcome.FAILED
    ceiling = report.ceilings[0]
    assert not ceiling.complete
    assert ceiling.low == 8
    assert ceiling.level == 8
    assert "invalid" in ceiling.stop_reason
    assert len(report.steps) == 3  # every step kept, the failed ones too
    assert sink.report is report
    assert sink.phases[-1] is Phase.FAILED
    assert marked_processes(mark) == []


async def test_cgroups_not_permitted_runs_unpinned_and_says_so(tmp_path: Path, mark: str) -> None:
    test = short_cpu_test()
    test.spec.search.max_trials = 1  # one step is enough to see it run

    def make(variant: Variant | None) -> LocalPlatform:
        return LocalPlatform("t-unpinned", tmp_path, cgroup_root=tmp_path / "no-cgroups")

    report = await run_test(test, make, RecordingSink())
    assert report.pinned is False
    assert any("UNPINNED" in w for w in report.warnings)
    assert report.steps
    assert report.steps[0].target is not None
    assert report.steps[0].target.source == "proc"
    assert "unpinned" in report.summary[0]
    assert marked_processes(mark) == []


async def test_target_that_exits_early_fails_with_its_log(tmp_path: Path, mark: str) -> None:
    test = short_cpu_test()
    test.spec.target.command = ["python", "-c", "print('cannot open /etc/x.conf'); exit(4)"]
    report = await run_test(test, lambda v: LocalPlatform("t-exit", tmp_path), RecordingSink())
    assert report.outcome is Outcome.FAILED
    assert "exited before it was ready" in report.message
    assert "cannot open /etc/x.conf" in report.message
    assert marked_processes(mark) == []


async def test_target_port_in_use_is_a_clear_error(tmp_path: Path, mark: str) -> None:
    test = short_cpu_test()
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    test.spec.target.port_env = None
    test.spec.target.port = port
    try:
        report = await run_test(test, lambda v: LocalPlatform("t-port", tmp_path), RecordingSink())
    finally:
        server.close()
    assert report.outcome is Outcome.FAILED
    assert f"port {port}" in report.message
    assert "already in use" in report.message
    assert marked_processes(mark) == []
