"""A resumed run knows from its history which variants are already done."""

from __future__ import annotations

from datetime import UTC, datetime

from plimsoll.api import load_capacity_test
from plimsoll.api.report import RunReport
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import StepRecord, Verdict
from plimsoll.run.variant import concluded_ceiling
from tests.controller.conftest import quickstart


def spec(levels: list[int]) -> CapacityTestSpec:
    body = quickstart("resume", None, levels=levels)
    body["spec"]["variants"] = [{"name": "light"}, {"name": "heavy"}]
    return load_capacity_test(body).spec


def step(index: int, level: int, variant: str, verdict: Verdict) -> StepRecord:
    return StepRecord(index=index, level=level, variant=variant, verdict=verdict, duration=3.0)


def report(test_spec: CapacityTestSpec) -> RunReport:
    return RunReport(test_name="resume", spec=test_spec, started_at=datetime.now(UTC), platform="k")


def test_a_variant_whose_search_the_history_completed_is_done() -> None:
    levels = spec([20, 40])
    history = [
        step(0, 20, "light", Verdict.PASS),
        step(1, 40, "light", Verdict.FAIL),
        step(2, 20, "heavy", Verdict.PASS),  # heavy's 40 was under way when it stopped
    ]
    light = concluded_ceiling(levels, "light", history, report(levels))
    assert light is not None
    assert (light.variant, light.level, light.high, light.complete) == ("light", 20, 40, True)
    assert concluded_ceiling(levels, "heavy", history, report(levels)) is None
    assert concluded_ceiling(levels, "light", [], report(levels)) is None
