"""Variants run in turn, and a level split over several generator processes and replicas.

The CPU-bound example target burns WORK_MS of CPU per request, so a variant's
env override shows in what the target used; two generator replicas of two
processes each share one level exactly and their results merge into one step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.resource import CapacityTest
from plimsoll.api.step import Verdict
from plimsoll.api.trial import Outcomes
from plimsoll.decide.step_summary import merged_outcomes
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.live import ConsoleSink
from plimsoll.run.runner import run_test
from tests.localrun import marked_processes, one_level_test, saved_report

pytestmark = pytest.mark.usefixtures("mark")


def cpu_test(level: int, **spec: Any) -> CapacityTest:
    target = {
        "command": ["python", "examples/targets/cpu_bound.py"],
        "env": {"WORK_MS": "2"},
        "resources": {"cpu": "0.5", "memory": "128Mi"},
    }
    return one_level_test("split", target, level, **spec)


async def test_two_variants_run_in_turn_each_with_its_ceiling_and_env(
    tmp_path: Path, mark: str
) -> None:
    test = cpu_test(
        10,
        generators={"replicas": 1, "processes": 1},
        variants=[
            {"name": "light", "env": {"WORK_MS": "4"}},
            {"name": "heavy", "env": {"WORK_MS": "20"}},
        ],
    )
    names: list[str] = []

    def make(variant: Any) -> LocalPlatform:
        names.append(variant.name)
        return LocalPlatform(f"v-{variant.name}-{mark[:6]}", tmp_path / variant.name)

    out = tmp_path / "out"
    report = await run_test(test, make, ConsoleSink(test, out, quiet=True))

    assert report.outcome is Outcome.SUCCEEDED, report.message
    assert names == ["light", "heavy"]  # one platform each, in the spec's order
    ceilings = saved_report(out)["ceilings"]
    # One level each, passed: "at least 10", not a ceiling, and the run did what it asked.
    assert [(c["variant"], c["level"], c["complete"], c["everyLevelPassed"]) for c in ceilings] == [
        ("light", 10, False, True),
        ("heavy", 10, False, True),
    ]
    # Each variant's steps in turn (a busy host may repeat a step: the last one settled it).
    assert [s.variant for s in report.steps] == sorted(
        (s.variant for s in report.steps), key=["light", "heavy"].index
    )
    light = [s for s in report.steps if s.variant == "light"][-1]
    heavy = [s for s in report.steps if s.variant == "heavy"][-1]
    assert heavy.started_at > light.ended_at
    # The override reached the target: five times the CPU per request at the same rate.
    assert light.target is not None
    assert light.target.cpu_mean_cores is not None
    assert heavy.target is not None
    assert heavy.target.cpu_mean_cores is not None
    assert heavy.target.cpu_mean_cores > 2.5 * light.target.cpu_mean_cores
    assert len(report.summary) == 2
    assert report.summary[1].startswith("[heavy] ")
    assert marked_processes(mark) == []


async def test_level_is_split_over_two_replicas_of_two_processes_and_merged(
    tmp_path: Path, mark: str
) -> None:
    level = 40
    test = cpu_test(level, generators={"replicas": 2, "processes": 2})
    platforms: list[LocalPlatform] = []

    def make(variant: Any) -> LocalPlatform:
        platforms.append(LocalPlatform(f"g-{mark[:6]}", tmp_path))
        return platforms[-1]

    report = await run_test(test, make, ConsoleSink(test, tmp_path / "out", quiet=True))

    assert report.outcome is Outcome.SUCCEEDED, report.message
    [step] = report.steps
    assert step.judgement.verdict is Verdict.PASS, step.judgement.reasons
    client = step.client
    assert client is not None
    assert client.generators == 4  # two replicas of two processes, merged into one result
    # The shares add up to the level: four processes at a quarter each, not the whole each.
    expected = level * client.measured_seconds
    assert abs(client.intended - expected) <= 4, (client.intended, expected)
    assert client.sent == merged_outcomes(client).total
    assert merged_outcomes(client) == Outcomes(ok=client.sent)
    # Both replicas ran and were measured, each as a process group of its own.
    assert {"generator", "generator-1"} <= set(step.others)
    for role in ("generator", "generator-1"):
        usage = step.others[role]
        assert usage.cpu_mean_cores is not None
        assert usage.cpu_mean_cores > 0
    assert sum(p.name.startswith("generator") for p in platforms[0].processes) == 2
    assert marked_processes(mark) == []
