"""A resumed run knows from its history which variants are already done."""

from __future__ import annotations

from datetime import UTC, datetime

from plimsoll.api import load_capacity_test
from plimsoll.api.report import RunReport
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import StepRecord, Verdict
from plimsoll.decide.search.stopping import search_view
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


def test_a_second_retry_of_an_invalid_step_hides_both_invalid_attempts_from_the_search() -> None:
    # A saturated step retried on more generators, saturated again, and awaits its second
    # retry: the search sees the pass below it only, so it asks for the same level again.
    records = [
        step(0, 100, "default", Verdict.PASS),
        step(1, 200, "default", Verdict.INVALID),
        step(2, 200, "default", Verdict.INVALID).model_copy(update={"attempt": 2}),
    ]
    assert search_view(records, 2) == records[:1]
    assert search_view(records[:2], 1) == records[:1]
    # Once the retry is settled the invalid attempts it stood for stay out.
    settled = [*records, step(3, 200, "default", Verdict.PASS).model_copy(update={"attempt": 3})]
    assert search_view(settled, 0) == [settled[0], settled[3]]
