"""For real on this machine: default settings pass a low Poisson rate, and a CPU hog
pinned beside a pinned target makes a failing step noisy, never a fail.

The target is the CPU-bound example (WORK_MS of CPU per request) pinned with
cgroups to 0.5 CPU and with affinity to CPU 0; the hogs spin on CPU 0 too, so
the target's threads wait for the CPU outside their own throttling, which the
sampler reads from schedstat. `noise.retries: 0` keeps the busy run to one
step: it ends inconclusive instead of naming a ceiling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.hogs import cpu_hogs, pinned
from plimsoll.api.report import Outcome
from plimsoll.api.resource import CapacityTest
from plimsoll.api.step import Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from tests.localrun import RecordingSink, marked_processes

pytestmark = pytest.mark.usefixtures("mark")


def cpu_test(level: int, work_ms: str, **spec: Any) -> CapacityTest:
    """One level of GET /work with DEFAULT arrival (Poisson), bar (99% achieved) and noise."""
    return CapacityTest.model_validate(
        {
            "metadata": {"name": "truth"},
            "spec": {
                "target": {
                    "command": pinned(["python", "examples/targets/cpu_bound.py"], 0),
                    "portEnv": "PORT",
                    "env": {"WORK_MS": work_ms},
                    "resources": {"cpu": "0.5", "memory": "128Mi"},
                },
                "upstream": {"routes": [{"name": "unused", "path": "/unused"}]},
                "workload": {"mix": [{"name": "work", "path": "/work"}], "timeout": "5s"},
                "trial": {"duration": "3s", "warmUp": "1s"},
                "search": {"strategy": "steps", "levels": [level], "repeats": 0},
                "passWhen": {"latency": [{"quantile": "p99", "below": "500ms"}]},
                "generators": {"replicas": 1, "processes": 1},
                **spec,
            },
        }
    )


async def test_a_low_poisson_rate_with_default_settings_passes(tmp_path: Path, mark: str) -> None:
    report = await run_test(
        cpu_test(10, "2"), lambda v: LocalPlatform("poisson", tmp_path), RecordingSink()
    )
    assert report.outcome is Outcome.SUCCEEDED, report.message
    (step,) = report.steps
    assert step.judgement.verdict is Verdict.PASS, step.judgement.reasons
    client = step.client
    assert client is not None
    assert client.nominal == pytest.approx(10 * client.measured_seconds)
    assert client.intended > 0
    assert client.sent_on_time == client.intended  # none late, none dropped at 10/s
    assert step.contention is not None
    assert step.contention.target_cpu_wait is not None  # read from schedstat
    assert marked_processes(mark) == []


async def test_a_hog_beside_the_target_makes_a_failing_step_noisy_not_failed(
    tmp_path: Path, mark: str
) -> None:
    # 22/s of 20 ms is 0.44 CPU: within the 0.5 CPU quota, but beside three hogs on CPU 0
    # the target gets about a quarter of it (measured: 0.24).
    test = cpu_test(22, "20", noise={"retries": 0})
    with cpu_hogs(cpu=0, count=3, seconds=60):
        report = await run_test(test, lambda v: LocalPlatform("hogged", tmp_path), RecordingSink())
    (step,) = report.steps
    contention = step.contention
    assert contention is not None
    assert contention.busy, contention
    assert contention.target_cpu_wait is not None
    assert contention.target_cpu_wait > 0.15
    assert step.judgement.verdict is Verdict.NOISY, step.judgement.reasons
    assert step.judgement.reasons[0].startswith("the host was busy (")
    ceiling = report.ceilings[0]
    assert ceiling.inconclusive
    assert ceiling.level is None
    assert ceiling.stop_reason.startswith("inconclusive: the host was busy")
    assert "inconclusive: the host was busy" in report.summary[0]
    assert marked_processes(mark) == []
