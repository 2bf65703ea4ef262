"""The windows around a fault, on known timelines."""

from __future__ import annotations

from plimsoll.api.spec import PassWhen
from plimsoll.api.step import Judgement, Verdict
from plimsoll.decide.fault_windows import judge_fault, with_faults
from tests.timelinefixtures import known_timeline

BAR = PassWhen.model_validate({"latency": [{"quantile": "p99", "below": "10ms"}]})


def test_a_spike_that_recovers_holds() -> None:
    slices = known_timeline([2, 2, 2, 40, 12, 3, 2, 2], [0, 0, 0, 5, 0, 0, 0, 0])
    outcome = judge_fault(slices, 3.5, BAR, "1 replica killed at 3.5 s", ["target-2"])
    before, during, after = outcome.windows
    assert (before.start, before.end, during.start, during.end) == (0, 3, 3, 5)
    assert (after.start, after.end) == (5, 8)
    assert before.ok
    assert after.ok
    assert not during.ok
    assert outcome.recovery_s == 1.5
    assert outcome.caused_errors == 5
    assert outcome.held
    judged = with_faults(Judgement(verdict=Verdict.FAIL, reasons=["p99 over"]), [outcome])
    assert judged.verdict is Verdict.PASS  # the whole trial's p99 mixes the spike in


def test_an_overload_from_the_fault_on_fails() -> None:
    slices = known_timeline([2, 2, 2, 15, 30, 60, 90, 120], [0, 0, 0, 2, 0, 0, 0, 0])
    outcome = judge_fault(slices, 3.5, BAR, "1 replica killed at 3.5 s", ["target-2"])
    assert outcome.recovery_s is None
    assert [w.name for w in outcome.windows] == ["before", "during"]
    assert not outcome.held
    judged = with_faults(Judgement(verdict=Verdict.PASS), [outcome])
    assert judged.verdict is Verdict.FAIL
    assert judged.reasons == ["1 replica killed at 3.5 s: p99 never came back within the bar"]


def test_a_fault_that_did_not_show_still_has_its_own_slice_as_during() -> None:
    slices = known_timeline([2] * 6, [0] * 6)
    outcome = judge_fault(slices, 2.5, BAR, "zone a lost at 2.5 s", ["target"])
    assert [(w.name, w.start, w.end) for w in outcome.windows] == [
        ("before", 0, 2),
        ("during", 2, 3),
        ("after", 3, 6),
    ]
    assert outcome.held
    assert outcome.recovery_s == 0.5
    assert outcome.caused_errors == 0


def test_a_slice_ending_just_before_the_fault_is_during_it() -> None:
    # The runner's clock runs a few milliseconds ahead of the generators': failures may
    # land in the slice that ends just before the fault as the runner saw it.
    slices = known_timeline([2, 2, 2, 2, 2, 2], [0, 0, 3, 0, 0, 0])
    outcome = judge_fault(slices, 3.0, BAR, "x", [])
    assert outcome.windows[0].end == 2
    assert outcome.windows[0].ok
    assert outcome.caused_errors == 3


def test_an_invalid_step_stays_invalid() -> None:
    slices = known_timeline([2] * 6, [0] * 6)
    outcome = judge_fault(slices, 2.0, BAR, "x", [])
    invalid = Judgement(verdict=Verdict.INVALID, reasons=["generator died"])
    assert with_faults(invalid, [outcome]) == invalid
