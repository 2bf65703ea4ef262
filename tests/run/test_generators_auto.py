"""`generators.replicas: auto` on the local platform: a generator that saturates at a
level makes that step invalid, and its retry runs on more generators and is valid.

The bar for a saturated generator (`maxCpu`) is set from a measurement in the same
test: one generator's peak CPU at the level and at an eighth of it, the bar halfway
between. A generator's cost per request and its fixed cost differ between hosts by 2-3x
(measured: 0.035 and 0.08 cores at 600 requests/s), so a fixed bar either never trips
or never clears. What is tested is the runner's reaction, not how fast a generator is.
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

LEVEL = 1200  # requests per second, uniform
SHARE = 8  # the calibration's light level is LEVEL / SHARE
TARGET = {
    "command": ["python", "examples/targets/cpu_bound.py"],
    "env": {"WORK_MS": "0"},
    "resources": {"cpu": "0.5", "memory": "128Mi"},
}
TRIAL = {"duration": "3s", "warmUp": "0.5s"}


async def _one_generator_peaks(tmp_path: Path, mark: str) -> tuple[float, float]:
    """One generator's peak CPU at LEVEL / SHARE and at LEVEL, with no bar to trip."""
    test = one_level_test(
        "calibrate-generator",
        TARGET,
        trial=TRIAL,
        search={"strategy": "steps", "levels": [LEVEL // SHARE, LEVEL], "repeats": 0},
        generators={"replicas": 1, "maxCpu": "100%"},
    )
    sink = RecordingSink()
    await run_test(test, lambda v: LocalPlatform(f"cal-{mark[:6]}", tmp_path / "cal"), sink)
    light, heavy = (r.generator_peak_cpu for r in sink.records)
    assert light is not None, sink.records
    assert heavy is not None, sink.records
    return light, heavy


async def test_auto_adds_generators_when_one_saturates_and_the_retry_is_valid(
    tmp_path: Path, mark: str
) -> None:
    light, heavy = await _one_generator_peaks(tmp_path, mark)
    assert heavy > 1.5 * light, (
        f"one generator peaked at {heavy:.3f} cores at {LEVEL}/s and {light:.3f} at "
        f"{LEVEL // SHARE}/s: on this host its fixed cost hides the load, so no bar can "
        "separate one generator from several"
    )
    max_cpu = (light + heavy) / 2
    test = one_level_test(
        "auto-generators",
        TARGET,
        LEVEL,
        trial=TRIAL,
        # replicas unset: auto, the local default
        generators={"maxCpu": f"{max_cpu * 100:.1f}%"},
    )
    assert test.spec.generators.replicas is None
    platforms: list[LocalPlatform] = []

    def make(variant: Any) -> LocalPlatform:
        platforms.append(LocalPlatform(f"auto-{mark[:6]}", tmp_path))
        return platforms[-1]

    sink = RecordingSink()
    report = await run_test(test, make, sink)
    max_cpu = test.spec.generators.max_cpu

    first, *retries = sink.records
    # One generator sent the whole level and went past the bar: invalid, not the end.
    assert first.generators == 1
    assert first.verdict is Verdict.INVALID, first.reasons
    assert first.generator_peak_cpu is not None
    assert first.generator_peak_cpu > max_cpu
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
