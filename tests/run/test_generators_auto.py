"""`generators.replicas: auto` on the local platform: a generator that saturates at a
level makes that step invalid, and its retry runs on more generators and is valid.

The bar for a saturated generator is set low (`maxCpu`), so one generator process
sending the level is past it while a few share it with room to spare: what is
tested is the runner's reaction, not how fast a generator is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.step import Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from tests.localrun import RecordingSink, marked_processes, one_level_test

pytestmark = pytest.mark.usefixtures("mark")

LEVEL = 600  # requests per second, uniform
MAX_CPU = 0.04


async def test_auto_adds_generators_when_one_saturates_and_the_retry_is_valid(
    tmp_path: Path, mark: str
) -> None:
    target = {
        "command": ["python", "examples/targets/cpu_bound.py"],
        "env": {"WORK_MS": "0"},
        "resources": {"cpu": "0.5", "memory": "128Mi"},
    }
    test = one_level_test(
        "auto-generators",
        target,
        LEVEL,
        trial={"duration": "3s", "warmUp": "0.5s"},
        generators={"maxCpu": f"{MAX_CPU:.0%}"},  # replicas unset: auto, the local default
    )
    assert test.spec.generators.replicas is None
    platforms: list[LocalPlatform] = []

    def make(variant: Any) -> LocalPlatform:
        platforms.append(LocalPlatform(f"auto-{mark[:6]}", tmp_path))
        return platforms[-1]

    sink = RecordingSink()
    report = await run_test(test, make, sink)

    first, *retries = sink.records
    # One generator sent the whole level and went past the bar: invalid, not the end.
    assert first.generators == 1
    assert first.verdict is Verdict.INVALID, first.reasons
    assert first.generator_peak_cpu is not None
    assert first.generator_peak_cpu > MAX_CPU
    assert any("a generator used" in reason for reason in first.reasons)
    # The retry of the same level ran on more generators, sized from the first's CPU.
    assert retries, "the saturated step was not retried"
    last = retries[-1]
    assert last.level == first.level
    assert last.generators is not None
    assert last.generators > 1
    assert last.verdict is Verdict.PASS, last.reasons
    counts = [r.generators or 0 for r in sink.records]
    assert counts == sorted(counts)  # never scaled down
    assert report.outcome is Outcome.SUCCEEDED, report.message
    assert any(line.startswith("generators (default): 1 -> ") for line in report.placement)
    running = [p for p in platforms[0].processes if p.name.startswith("generator")]
    assert len(running) == last.generators
    assert marked_processes(mark) == []
