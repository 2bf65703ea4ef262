"""The run's answer to a pipeline: within the bar, refused, or incomplete, from its cases."""

from __future__ import annotations

from plimsoll.api.autoscale import FlightResult
from plimsoll.api.gate import RegressionStatus
from plimsoll.api.proof import Proof
from plimsoll.api.report import Outcome
from plimsoll.api.status import CapacityTestStatus, Phase, VariantState, VariantStatus
from plimsoll.api.step import Verdict
from plimsoll.decide.pipeline_gate import (
    Answer,
    report_answer,
    report_cases,
    run_ended,
    status_answer,
    status_cases,
)
from tests.reportfixtures import Run, ladder, make_report

BOTH = {
    "default": Run(400, 440, ladder(400, 440, 0.002)),
    "postgres": Run(200, 220, ladder(200, 220, 0.004)),
}


def test_every_ceiling_found_and_no_gate_is_within() -> None:
    report = make_report(BOTH)
    cases = report_cases(report)
    assert [(c.name, c.passed) for c in cases] == [
        ("ceiling default", True),
        ("ceiling postgres", True),
    ]
    assert report_answer(report, cases) is Answer.WITHIN


def test_a_ceiling_below_the_bar_or_a_regression_refuses() -> None:
    report = make_report(BOTH)
    below = report_cases(report, fail_below=300)
    assert [c.passed for c in below] == [True, False]
    assert "ceiling 200 rps, below the bar of 300 rps" in below[1].message
    assert report_answer(report, below) is Answer.REFUSED

    regressed = report_cases(report, {"default": ["REGRESSION: this run holds 400"]})
    assert [c.passed for c in regressed] == [False, True]
    assert report_answer(report, regressed) is Answer.REFUSED


def test_a_run_that_could_not_complete_is_incomplete_whatever_its_cases() -> None:
    report = make_report(BOTH)
    report.outcome, report.message = Outcome.FAILED, "the target exited (code 3)"
    report.ceilings[1] = report.ceilings[1].model_copy(update={"complete": False})
    cases = report_cases(report, fail_below=300)
    assert cases[1].passed is None
    assert "stopped early: the target exited (code 3)" in cases[1].message
    assert report_answer(report, cases) is Answer.INCOMPLETE

    empty = make_report(BOTH)
    empty.outcome, empty.message, empty.ceilings = Outcome.FAILED, "no generator started", []
    cases = report_cases(empty)
    assert [(c.name, c.passed, c.message) for c in cases] == [("run", None, "no generator started")]


def test_nothing_passing_at_all_is_an_answer_and_it_is_no() -> None:
    report = make_report({"default": Run(None, 25, [(25, Verdict.FAIL, 0.1)])})
    cases = report_cases(report)
    assert cases[0].passed is False
    assert "even the lowest level failed" in cases[0].message
    assert report_answer(report, cases) is Answer.REFUSED


def _proof(held: bool) -> Proof:
    return Proof(held=held, level=35, unit="rps", replicas=3, sentence=f"held={held}")


def test_a_proof_is_the_case_of_a_proof_run() -> None:
    report = make_report(BOTH)
    cases = report_cases(report, proof=_proof(False))
    assert [(c.name, c.passed, c.message) for c in cases] == [("proof", False, "held=False")]
    assert report_answer(report, cases) is Answer.REFUSED
    assert report_answer(report, report_cases(report, proof=_proof(True))) is Answer.WITHIN


def test_a_cluster_status_answers_the_same_way() -> None:
    ok = CapacityTestStatus(
        phase=Phase.SUCCEEDED,
        variants=[
            VariantStatus(name="a", state=VariantState.SUCCEEDED, ceiling=300, unit="rps"),
            VariantStatus(name="b", state=VariantState.SUCCEEDED, ceiling=120, unit="rps"),
        ],
    )
    assert status_answer(ok, status_cases(ok)) is Answer.WITHIN
    assert status_answer(ok, status_cases(ok, fail_below=200)) is Answer.REFUSED
    regressed = ok.model_copy(
        update={"regression": [RegressionStatus(variant="b", regressed=True, message="-20%")]}
    )
    cases = status_cases(regressed)
    assert [(c.name, c.passed) for c in cases] == [("ceiling a", True), ("ceiling b", False)]
    assert status_answer(regressed, cases) is Answer.REFUSED
    failed = CapacityTestStatus(phase=Phase.FAILED, message="provisioning timed out")
    assert status_answer(failed, status_cases(failed)) is Answer.INCOMPLETE
    proved = CapacityTestStatus(phase=Phase.SUCCEEDED, proof=_proof(False))
    assert status_answer(proved, status_cases(proved)) is Answer.REFUSED


def test_a_status_left_from_before_an_edit_or_a_rerun_is_not_the_end() -> None:
    done = CapacityTestStatus(phase=Phase.SUCCEEDED, observed_generation=2, rerun_token="t1")
    meta = {"generation": 2, "annotations": {"plimsoll.dev/rerun": "t1"}}
    assert run_ended(meta, done)
    assert not run_ended({**meta, "generation": 3}, done)  # edited since
    assert not run_ended({**meta, "annotations": {"plimsoll.dev/rerun": "t2"}}, done)
    running = done.model_copy(update={"phase": Phase.RUNNING})
    assert not run_ended(meta, running)


def test_at_least_meets_a_bar_under_it_and_cannot_judge_one_over_it() -> None:
    """Every level passed: the level is a lower bound, not a ceiling (issue 51)."""
    passes = [(level, Verdict.PASS, level * 0.002) for level in (100, 200, 400)]
    report = make_report({"default": Run(400, None, passes)})
    [ceiling] = report.ceilings
    report.ceilings = [
        ceiling.model_copy(update={"complete": False, "every_level_passed": True, "high": None})
    ]
    [plain] = report_cases(report)
    assert (plain.passed, plain.message) == (True, "at least 400 rps (every level passed)")
    assert report_answer(report, [plain]) is Answer.WITHIN
    [under] = report_cases(report, fail_below=300)
    assert under.passed is True
    assert report_answer(report, [under]) is Answer.WITHIN
    [over] = report_cases(report, fail_below=500)
    assert over.passed is None
    assert "no level as high as the bar of 500 was tried" in over.message
    assert report_answer(report, [over]) is Answer.INCOMPLETE


def test_a_flight_is_the_case_of_a_flight_run() -> None:
    report = make_report({"default": Run(None, 45, [(45, Verdict.FAIL, 0.1)])})
    grounded = FlightResult(profile="a burst", held=False, sentence="a burst: it did not hold")
    report.steps[0] = report.steps[0].model_copy(update={"flight": grounded})
    cases = report_cases(report)
    assert [(c.name, c.passed, c.message) for c in cases] == [
        ("flight default", False, "a burst: it did not hold")
    ]
    assert report_answer(report, cases) is Answer.REFUSED
    flown = grounded.model_copy(update={"held": True, "sentence": "a burst: it held"})
    report.steps[0] = report.steps[0].model_copy(update={"flight": flown})
    assert report_answer(report, report_cases(report)) is Answer.WITHIN
