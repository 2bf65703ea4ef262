"""Three replicas of a CPU-bound target on the local platform, one killed mid-trial.

Each replica is pinned to 0.25 CPU and every request costs 10 ms of CPU, so one
replica carries at most 25 requests/s and the two left after a kill 50 (the
analytic ceiling `examples/targets/cpu_bound.py` is built to have, and that
tests/run checks the search finds within 15%). At 35 requests/s the two carry
the load: the fault holds. At 60 (80% of the three's 75, 20% over the two's 50)
they cannot: the queue grows from the kill on and the fault fails. Real processes,
cgroups and loopback.

The noise settings are the product's defaults: a step run while the host was busy
(CI runs other suites' session fixtures beside this one) is called noisy and
repeated, so the step judged here is the last one, and it must not be noisy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plimsoll.api.step import StepResult, Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from plimsoll.shared.timeline import points
from tests.localrun import RecordingSink, one_level_test

pytestmark = pytest.mark.usefixtures("mark")
KILL_AT = 3.0


async def _run(tmp_path: Path, mark: str, level: int) -> tuple[StepResult, LocalPlatform]:
    target = {
        "command": ["python", "examples/targets/cpu_bound.py"],
        "portEnv": "PORT",
        "env": {"WORK_MS": "10"},
        "resources": {"cpu": "0.25", "memory": "128Mi"},
        "replicas": 3,
        "zones": ["a", "b", "c"],
    }
    test = one_level_test(
        "kill",
        target,
        level=level,
        trial={
            "duration": "8s",
            "warmUp": "1s",
            "slice": "500ms",
            "faults": [{"at": f"{KILL_AT}s", "kill": {"replicas": 1}}],
        },
        workload={
            "model": "rate",
            "arrival": "uniform",
            "mix": [{"name": "work", "path": "/work"}],
            "timeout": "3s",
        },
        passWhen={"latency": [{"quantile": "p99", "below": "400ms"}], "minAchieved": "90%"},
        generators={"replicas": 1, "processes": 1},
        noise={},
    )
    platforms: list[LocalPlatform] = []

    def make(variant: object) -> LocalPlatform:
        platforms.append(LocalPlatform(f"kill-{mark[:6]}-{level}", tmp_path))
        return platforms[-1]

    report = await run_test(test, make, RecordingSink())
    step = report.steps[-1]
    assert step.judgement.verdict is not Verdict.NOISY, (step.judgement, step.contention)
    return step, platforms[0]


async def test_two_replicas_left_carry_a_load_under_their_ceiling(
    tmp_path: Path, mark: str
) -> None:
    step, platform = await _run(tmp_path, mark, level=35)
    assert [r.role for r in platform.replicas] == ["target", "target-1", "target-2"]
    assert [r.zone for r in platform.replicas] == ["a", "b", "c"]
    [outcome] = step.faults
    assert outcome.taken == ["target-2"]
    assert abs(outcome.at - KILL_AT) < 0.5
    assert outcome.held, [(w.name, w.p99_ms, w.errors, w.reasons) for w in outcome.windows]
    assert step.judgement.verdict is Verdict.PASS, step.judgement.reasons
    assert outcome.recovery_s is not None
    assert outcome.recovery_s < 3
    assert [w.name for w in outcome.windows] == ["before", "during", "after"]
    # The calls in flight on the killed replica, or sent to it before it was noticed,
    # failed, and the timeline shows them where they happened.
    assert step.client is not None
    series = points(step.client.timeline)
    failed_at = [p.start for p in series if p.errors]
    assert outcome.caused_errors >= 1
    assert failed_at
    assert all(KILL_AT - 0.5 <= at <= KILL_AT + 1.5 for at in failed_at)
    assert step.others["target-1"].cpu_mean_cores is not None  # measured per replica


async def test_two_replicas_left_cannot_carry_a_load_over_their_ceiling(
    tmp_path: Path, mark: str
) -> None:
    step, _ = await _run(tmp_path, mark, level=60)
    [outcome] = step.faults
    before = outcome.windows[0]
    assert before.name == "before"
    assert before.ok, (before, step.contention)  # three replicas carried it
    assert not outcome.held
    assert step.judgement.verdict is Verdict.FAIL
    assert any("kill" in r or "never came back" in r for r in step.judgement.reasons), (
        step.judgement.reasons
    )
