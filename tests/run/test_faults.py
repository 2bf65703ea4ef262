"""The runner on the local platform when things go wrong: nothing measured is lost, and no
process is left behind. Real target, mock and generator processes on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.spec import Search, Variant
from plimsoll.api.status import CurrentStep
from plimsoll.api.step import StepRecord, StepResult, Verdict
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.platforms.local.processes import ManagedProcess
from plimsoll.platforms.replacements import ReplacementBudget
from plimsoll.run.runner import run_test
from tests.localrun import RecordingSink, marked_processes, short_cpu_test

pytestmark = pytest.mark.usefixtures("mark")


def _named(platforms: list[LocalPlatform], name: str) -> ManagedProcess:
    return next(p for p in platforms[0].processes if p.name == name)


async def _kill(process: ManagedProcess) -> None:
    """SIGKILL the process group, and wait until the platform can see it gone."""
    assert process.process is not None
    os.killpg(process.process.pid, signal.SIGKILL)
    await process.process.wait()


class CrashingSink(RecordingSink):
    """Kills the generator half a second into the second step, and the mock once the third
    step is judged: both are dead when the next trial is due."""

    def __init__(self, platforms: list[LocalPlatform]) -> None:
        super().__init__()
        self.platforms = platforms
        self.killed: dict[str, int] = {}  # name -> pid killed

    async def step_started(self, step: CurrentStep) -> None:
        await super().step_started(step)
        if step.index == 1:
            generator = _named(self.platforms, "generator")
            self.killed["generator"] = generator.pid or 0
            loop = asyncio.get_running_loop()
            loop.call_later(0.5, os.killpg, generator.pid, signal.SIGKILL)

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        await super().step_finished(record, result)
        if record.index == 2:
            mock = _named(self.platforms, "mock")
            self.killed["mock"] = mock.pid or 0
            await _kill(mock)


async def test_dead_generator_and_mock_are_started_again_and_the_run_finds_its_ceiling(
    tmp_path: Path, mark: str
) -> None:
    platforms: list[LocalPlatform] = []

    def make(variant: Variant | None) -> LocalPlatform:
        platforms.append(LocalPlatform(f"t-{mark[:6]}", tmp_path))
        return platforms[-1]

    test = short_cpu_test()
    test.spec.search = Search.model_validate(
        {"strategy": "steps", "levels": [4, 6, 8], "repeats": 0}
    )
    sink = CrashingSink(platforms)
    report = await run_test(test, make, sink)

    verdicts = [(r.level, r.verdict, r.attempt) for r in sink.records]
    # The trial the generator died in is invalid; its retry runs on the new generator.
    assert verdicts == [
        (4, Verdict.PASS, 1),
        (6, Verdict.INVALID, 1),
        (6, Verdict.PASS, 2),
        (8, Verdict.PASS, 1),
    ], [r.reasons for r in sink.records]
    assert "generator" in sink.records[1].reasons[0]
    assert report.outcome is Outcome.SUCCEEDED, report.message
    # Every level of the list passed: "at least 8", no ceiling, and the run did its part.
    ceiling = report.ceilings[0]
    assert (ceiling.level, ceiling.complete, ceiling.every_level_passed) == (8, False, True)
    assert len(sink.replaced) == 2, sink.replaced
    assert sink.replaced[0].startswith("generator exited (code -9): started again (1 of 3")
    assert sink.replaced[1].startswith("mock exited (code -9): started again (2 of 3")
    assert [w for w in report.warnings if "started again" in w] == [
        f"default: {line}" for line in sink.replaced
    ]
    for name, pid in sink.killed.items():  # new processes, not the killed ones
        assert _named(platforms, name).pid not in (None, pid)
    assert marked_processes(mark) == []


class MockKillingSink(RecordingSink):
    """Kills the mock after every judged step."""

    def __init__(self, platforms: list[LocalPlatform]) -> None:
        super().__init__()
        self.platforms = platforms

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        await super().step_finished(record, result)
        await _kill(_named(self.platforms, "mock"))


async def test_a_mock_that_keeps_dying_stops_the_run_after_three_replacements(
    tmp_path: Path, mark: str
) -> None:
    platforms: list[LocalPlatform] = []

    def make(variant: Variant | None) -> LocalPlatform:
        platforms.append(LocalPlatform(f"t-{mark[:6]}", tmp_path))
        return platforms[-1]

    test = short_cpu_test()
    test.spec.search = Search.model_validate(
        {"strategy": "steps", "levels": [4, 5, 6, 7, 8], "repeats": 0}
    )
    sink = MockKillingSink(platforms)
    report = await run_test(test, make, sink)

    # Each trial ran on a fresh mock; before the fifth, the budget was spent.
    assert [(r.level, r.verdict) for r in sink.records] == [
        (level, Verdict.PASS) for level in (4, 5, 6, 7)
    ], [r.reasons for r in sink.records]
    assert len(sink.replaced) == 3
    assert report.outcome is Outcome.FAILED
    ceiling = report.ceilings[0]
    assert not ceiling.complete
    assert ceiling.low == 7
    assert ceiling.stop_reason is not None
    assert ceiling.stop_reason.startswith("mock exited (code -9), and 3 generators or mocks")
    assert marked_processes(mark) == []


def test_replacements_are_bounded_with_a_message_naming_what_died() -> None:
    budget = ReplacementBudget(limit=2)
    assert budget.spend("pod generator-0", "is being deleted").endswith(
        "(1 of 2 replacements); the step is retried"
    )
    budget.spend("pod mock-0", "is missing (deleted)")
    with pytest.raises(PlatformError) as raised:
        budget.spend("pod generator-0", "stopped (phase Failed, Evicted)")
    message = str(raised.value)
    assert message.startswith("pod generator-0 stopped (phase Failed, Evicted), and 2 ")
    assert "pod mock-0 is missing (deleted)" in message
    assert "kubectl get events" in message
    assert len(budget.spent) == 2  # the refused one is not counted as replaced


async def test_cgroups_not_permitted_runs_unpinned_and_says_so(tmp_path: Path, mark: str) -> None:
    test = short_cpu_test()
    test.spec.search.max_trials = 1  # one step is enough to see it run

    def make(variant: Variant | None) -> LocalPlatform:
        return LocalPlatform(
            "t-unpinned", tmp_path, cgroup_root=tmp_path / "no-cgroups", allow_unpinned=True
        )

    report = await run_test(test, make, RecordingSink())
    assert report.pinned is False
    assert any("UNPINNED" in w for w in report.warnings)
    assert report.steps
    assert report.steps[0].target is not None
    assert report.steps[0].target.source == "proc"
    assert "unpinned" in report.summary[0]
    assert marked_processes(mark) == []


async def test_cgroups_not_permitted_and_unpinned_not_allowed_stops_the_start(
    tmp_path: Path, mark: str
) -> None:
    test = short_cpu_test()

    def make(variant: Variant | None) -> LocalPlatform:
        return LocalPlatform("t-refused", tmp_path, cgroup_root=tmp_path / "no-cgroups")

    report = await run_test(test, make, RecordingSink())
    assert report.outcome is Outcome.FAILED
    assert "the target cannot be pinned to " in report.message
    assert "run as root, or delegate a cgroup" in report.message
    assert not report.steps  # nothing was measured unpinned
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

    def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # The platform's port probe connects here: close our end, or its writer is left to
        # the garbage collector after the loop is gone (a ResourceWarning in a later test).
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    test.spec.target.port_env = None
    test.spec.target.port = port
    try:
        report = await run_test(test, lambda v: LocalPlatform("t-port", tmp_path), RecordingSink())
    finally:
        server.close()
        await server.wait_closed()
    assert report.outcome is Outcome.FAILED
    assert f"port {port}" in report.message
    assert "already in use" in report.message
    assert marked_processes(mark) == []
