"""Goodput and attainment: the request bounds taken from the bar, the step's figures from a
hand-checked set of answers, and `passWhen.goodput` judged by the verdict."""

from __future__ import annotations

from typing import Any

import pytest

from plimsoll.api.spec import Generators, LatencyBound, Noise, PassWhen
from plimsoll.api.step import CriterionKind, Judgement, StepResult, Verdict
from plimsoll.api.trial import OperationResult, Outcomes, TrialResult, TrialState
from plimsoll.decide.goodput import ATTAINMENT, figures, request_bounds
from plimsoll.decide.step_input import StepInput
from plimsoll.decide.step_summary import record_of
from plimsoll.decide.verdict import judge
from plimsoll.report.table import COLUMNS, row
from plimsoll.shared import histogram
from tests.reportfixtures import T0


def latency(millis: list[float]) -> str:
    h = histogram.new_histogram()
    for ms in millis:
        histogram.record_seconds(h, ms / 1000)
    return histogram.encode(h)


def test_each_scope_and_metric_keeps_the_bound_at_its_highest_quantile() -> None:
    bar = PassWhen(
        latency=[
            LatencyBound(quantile=0.50, below=0.010),  # the median: no promise to a request
            LatencyBound(quantile=0.99, below=0.050),
            LatencyBound(operation="chat", metric="ttft", quantile=0.999, below=0.2),
            LatencyBound(operation="chat", metric="ttft", quantile=0.99, below=0.3),
            LatencyBound(operation="chat", quantile=0.99, below=1.0),
            LatencyBound(operation="chat", quantile=0.99, below=0.8),  # same quantile: stricter
        ]
    )
    got = [(b.operation, b.metric, b.within) for b in request_bounds(bar)]
    assert got == [("*", "total", 0.05), ("chat", "total", 0.8), ("chat", "ttft", 0.2)]
    assert request_bounds(PassWhen()) == []


# The hand-checked step: 2,000 requests in 20 s. api: 980 answered as expected, 20
# transport failures, 950 of the 980 within the bounds. page: 990 as expected, 10 shed,
# 950 within. So 1,900 good: 95 per second, 95% of requests.
API_MS = [5.0] * 950 + [80.0] * 30  # the 30 over a 50 ms bound
PAGE_MS = [8.0] * 950 + [70.0] * 40 + [1.0] * 10  # the shed answers come back fast


def client(good: tuple[int | None, int | None] = (950, 950), **changes: Any) -> TrialResult:
    base: dict[str, Any] = {
        "id": "t",
        "state": TrialState.DONE,
        "level": 100,
        "operations": {
            "api": OperationResult(
                latency=latency(API_MS), outcomes=Outcomes(ok=980, transport=20), good=good[0]
            ),
            "page": OperationResult(
                latency=latency(PAGE_MS), outcomes=Outcomes(ok=990, shed=10), good=good[1]
            ),
        },
        "nominal": 2000.0,
        "intended": 2000,
        "sent": 2000,
        "sent_on_time": 2000,
        "late_tolerance": 0.1,
        "measured_seconds": 20.0,
        "cpu_seconds": 4.0,
    }
    base.update(changes)
    return TrialResult(**base)


def test_the_figures_of_a_hand_checked_step() -> None:
    found = figures(client())
    assert found is not None
    assert (found.good, found.requests) == (1900, 2000)
    assert found.per_second == 95.0
    assert found.attainment == 0.95
    # Wilson 95% interval of 1,900 / 2,000, worked by hand: 0.9396 to 0.9587.
    assert found.low == pytest.approx(0.9396, abs=1e-4)
    assert found.high == pytest.approx(0.9587, abs=1e-4)


def test_a_generator_that_did_not_judge_leaves_goodput_unknown_not_zero() -> None:
    assert figures(client(good=(950, None))) is None
    assert figures(None) is None


BAR = {"latency": [{"quantile": "p99", "below": "50ms"}]}


def verdict_at(at_least: str, good: tuple[int | None, int | None] = (950, 950)) -> Judgement:
    bar = PassWhen.model_validate({**BAR, "goodput": {"atLeast": at_least}})
    bar = bar.model_copy(update={"latency": []})  # judge goodput alone
    bar = bar.model_copy(
        update={"errors": bar.errors.model_copy(update={"transport": 1.0}), "max_shed": 1.0}
    )
    return judge(StepInput(client=client(good), level=100), bar, Noise(), Generators())


def test_attainment_over_the_bound_passes_and_under_it_fails_with_the_count() -> None:
    passed = verdict_at("90%")
    assert passed.verdict is Verdict.PASS
    [criterion] = [c for c in passed.criteria if c.kind is CriterionKind.GOODPUT]
    assert (criterion.name, criterion.measured, criterion.bound) == (ATTAINMENT, 0.95, 0.9)
    assert criterion.samples == 2000
    failed = verdict_at("97%")
    assert failed.verdict is Verdict.FAIL
    assert failed.reasons == [
        f"{ATTAINMENT} 95.00% < 97.00% (1,900 of 2,000 requests answered within every bound)"
    ]


def test_attainment_whose_interval_straddles_the_bound_is_marginal() -> None:
    judgement = verdict_at("95.5%")  # 0.9396-0.9587 holds 95.5%
    assert judgement.verdict is Verdict.MARGINAL
    assert "95% interval 93.96%-95.87% from 2,000 samples" in judgement.reasons[0]


def test_attainment_no_generator_judged_is_no_data_and_never_a_pass() -> None:
    judgement = verdict_at("50%", good=(None, 950))
    assert judgement.verdict is Verdict.INVALID
    assert judgement.reasons == [f"no data for {ATTAINMENT}: no data is never a pass"]


def test_the_step_record_and_the_report_row_carry_goodput() -> None:
    result = StepResult(
        index=1,
        level=100,
        started_at=T0,
        ended_at=T0,
        duration=20.0,
        client=client(),
        judgement=Judgement(verdict=Verdict.PASS),
    )
    record = record_of(result)
    assert (record.goodput, record.attainment) == (95.0, 0.95)
    assert record.attainment_low == pytest.approx(0.9396, abs=1e-4)
    cell = row(result, record).cells[COLUMNS.index("goodput/s (attainment)")]
    assert cell == "95.0 (95.0%, 94.0%-95.9%)"
