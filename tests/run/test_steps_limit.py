"""A run stops at `MAX_STATUS_STEPS` steps in all, so its status fits in etcd (issue 52).

A resumed run whose history already holds that many steps (16 variants of 500 trials
would have gone on to 8,000) starts no further trial: each variant left ends with the
range its steps show and says why. The equipment is never asked for a trial.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from plimsoll.api import load_capacity_test
from plimsoll.api.report import RunReport
from plimsoll.api.step import StepRecord, Verdict
from plimsoll.decide.status_steps import MAX_STATUS_STEPS
from plimsoll.run.variant import STEPS_LIMIT_REASON, run_variant
from tests.controller.conftest import quickstart


class _NoTrials:
    """Equipment, metrics and sink in one: any call means a trial was about to start."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"{name} was called: a trial past the step limit")


async def test_a_run_past_the_step_limit_starts_no_trial_and_keeps_its_range() -> None:
    body = quickstart("many", None, levels=list(range(10, 5010, 10)))
    body["spec"]["search"]["maxTrials"] = 500
    body["spec"]["variants"] = [{"name": "a"}, {"name": "b"}]
    spec = load_capacity_test(body).spec

    def step(index: int, level: int, variant: str, verdict: Verdict) -> StepRecord:
        return StepRecord(index=index, level=level, variant=variant, verdict=verdict, duration=3)

    last = MAX_STATUS_STEPS - 1
    history = [step(i, 10 * (i + 1), "a", Verdict.PASS) for i in range(last - 1)]
    history += [step(last - 1, 10, "b", Verdict.PASS), step(last, 20, "b", Verdict.FAIL)]
    report = RunReport(test_name="many", spec=spec, started_at=datetime.now(UTC), platform="k")
    nothing: Any = _NoTrials()
    ceiling = await run_variant(spec, "b", nothing, nothing, nothing, history, report)
    assert (ceiling.level, ceiling.high, ceiling.complete) == (10, 20, False)
    assert ceiling.stop_reason == STEPS_LIMIT_REASON
    assert f"{MAX_STATUS_STEPS} steps in all" in STEPS_LIMIT_REASON
