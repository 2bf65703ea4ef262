"""A real local run keeps each step's timeline: the CPU-bound example target pinned
to 0.5 CPU, one generator process, trials on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from plimsoll.api.report import Outcome
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from plimsoll.shared import histogram
from plimsoll.shared.timeline import points
from tests.localrun import RecordingSink, one_level_test

pytestmark = pytest.mark.usefixtures("mark")


async def test_a_step_keeps_its_timeline_and_its_steadiness(tmp_path: Path, mark: str) -> None:
    target = {
        "command": ["python", "examples/targets/cpu_bound.py"],
        "portEnv": "PORT",
        "env": {"WORK_MS": "2"},
        "resources": {"cpu": "0.5", "memory": "128Mi"},
    }
    test = one_level_test(
        "timeline",
        target,
        level=40,
        trial={"duration": "3s", "warmUp": "0.3s", "slice": "500ms"},
        generators={"replicas": 1, "processes": 1},
    )
    report = await run_test(
        test, lambda v: LocalPlatform(f"tl-{mark[:6]}", tmp_path), RecordingSink()
    )
    assert report.outcome is Outcome.SUCCEEDED, report.message
    [step] = report.steps
    assert step.client is not None
    timeline = step.client.timeline
    assert len(timeline) == 6
    assert sum(s.sent for s in timeline) == step.client.sent
    answered = histogram.merge(op.latency for op in step.client.operations.values())
    assert histogram.count(histogram.merge(s.latency for s in timeline)) == histogram.count(
        answered
    )
    assert all(40 * 0.8 < p.rate < 40 * 1.2 for p in points(timeline))
    # Six slices are enough to tell, and a 40 requests/s load on 0.5 CPU holds level.
    assert step.steadiness is not None
