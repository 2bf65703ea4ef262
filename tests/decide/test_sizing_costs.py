"""Sizing takes each cost from a flag, else the report's measurement, else spec.sizing."""

import pytest

from plimsoll.api.report import UnitCost
from plimsoll.api.sizing import SizingSpec, StoreSizing
from plimsoll.api.step import Verdict
from plimsoll.api.streams import StreamMemory
from plimsoll.api.trial import OperationResult, TrialResult, TrialState
from plimsoll.decide.sizing import plan_deployment
from plimsoll.decide.sizing_costs import SizingInputError, measured, resolve
from plimsoll.shared.histogram import encode, new_histogram, record_seconds
from tests.reportfixtures import Run, make_report

BASE = 50 * 2**20
PER_CALL = 64 * 1024  # what each call in flight costs the fixture's target


def _client(level: int, latency: float, seconds: float = 10.0) -> TrialResult:
    histogram = new_histogram()
    for _ in range(int(level * seconds)):
        record_seconds(histogram, latency)
    return TrialResult(
        id=f"t{level}",
        state=TrialState.DONE,
        level=level,
        operations={"get": OperationResult(latency=encode(histogram))},
        measured_seconds=seconds,
    )


def _report(with_store: bool = True):  # type: ignore[no-untyped-def]
    run = Run(
        level=400,
        high=800,
        steps=[(100, Verdict.PASS, 0.1), (200, Verdict.PASS, 0.2), (400, Verdict.PASS, 0.4)],
    )
    report = make_report({"default": run})
    sizing = {"peak": 1000, "zones": 3, "upstreamLatency": "100ms", "streams": 300}
    if with_store:
        sizing["store"] = {
            "name": "valkey",
            "callsMetric": "valkey_calls",
            "bytesPerKeyMetric": "valkey_bytes_per_key",
            "cpuPerCall": "20us",
        }
    report.spec.sizing = SizingSpec.model_validate(sizing)
    for step in report.steps:
        # 100 ms per call: level × 0.1 calls in flight, each costing PER_CALL.
        step.client = _client(step.level, 0.1)
        assert step.target is not None
        step.target.memory_max_bytes = BASE + int(step.level * 0.1 * PER_CALL)
        step.target.extra = {"valkey_calls": 1.5 + step.index * 0.1, "valkey_bytes_per_key": 120}
    report.stream_memory = [
        StreamMemory(bytes_per_stream=72 * 1024, counts=[0, 100, 200], memory_bytes=[1, 2, 3])
    ]
    return report


def test_every_cost_the_report_measured_is_read() -> None:
    found = measured(_report(), _report().unit_costs, None)
    assert found["per_pod"][0] == 400
    assert found["memory_per_stream"][0] == 72 * 1024
    # The slope over calls in flight recovers the per-call cost within the histogram's
    # 0.1% resolution.
    assert found["memory_per_in_flight"][0] == pytest.approx(PER_CALL, rel=0.01)
    assert found["calls_per_request"][0] == pytest.approx(1.6)  # mean of 1.5, 1.6, 1.7
    assert found["bytes_per_key"][0] == 120
    assert found["pod_memory"][0] == 256 * 2**20
    assert "cpu_per_call" not in found  # no metric named: spec.sizing supplies it
    assert "memory_per_user" not in found  # an rps run has no memory per modeled user


def test_flags_win_then_the_report_then_spec_sizing() -> None:
    report = _report()
    assert report.spec.sizing is not None
    sizing = resolve(
        report.spec.sizing, report, {"memory_per_stream": 100 * 1024}, costs=report.unit_costs
    )
    assert sizing.memory_per_stream == 100 * 1024
    assert sizing.sources["memory_per_stream"] == "flag"
    assert sizing.sources["per_pod"].startswith("report: ceiling of default")
    assert sizing.sources["memory_per_in_flight"].startswith("report: memory over calls")
    assert sizing.store is not None
    assert sizing.sources["calls_per_request"] == (
        "report: metrics.extra valkey_calls, 3 passing steps"
    )
    assert sizing.store.cpu_per_call == pytest.approx(20e-6)
    assert sizing.sources["cpu_per_call"] == "spec.sizing"
    result = plan_deployment(sizing)
    sources = {line.item: line.source for line in result.lines}
    assert "memory_per_stream: flag" in sources["stream cap"]
    assert "calls_per_request: report" in sources["valkey CPU"]
    assert result.store_shards is not None


def test_a_report_without_a_ceiling_names_the_fix() -> None:
    report = make_report({"default": Run(level=None, high=25, steps=[(25, Verdict.FAIL, 1.0)])})
    with pytest.raises(SizingInputError, match="--per-pod"):
        resolve(SizingSpec(peak=10), report, {}, costs=report.unit_costs)


def test_an_unknown_variant_lists_the_known_ones() -> None:
    with pytest.raises(SizingInputError, match=r"sizing.variant.*it has: default"):
        resolve(SizingSpec(peak=10, variant="tuned"), _report(), {}, costs=[])


def test_a_store_from_flags_alone() -> None:
    flags = {"per_pod": 50, "calls_per_request": 2, "cpu_per_call": 1e-3}
    sizing = resolve(SizingSpec(peak=100), None, flags, costs=[])
    assert sizing.store == StoreSizing(calls_per_request=2, cpu_per_call="1ms")
    assert (
        plan_deployment(sizing).store_shards == 1
    )  # 100 × 2 × 1 ms = 0.2 cores, under half a core


def test_a_range_only_ceiling_is_named_a_lower_bound() -> None:
    report = _report()
    report.ceilings[0].complete = False
    assert measured(report, report.unit_costs, None)["per_pod"][1].endswith(
        "(a lower bound: the run stopped before a level failed)"
    )


def test_memory_per_modeled_user_comes_from_the_per_unit_costs() -> None:
    report = _report()
    report.unit_costs = [
        UnitCost(name="memory per user", value=50263.8, unit="bytes", basis="slope over 3")
    ]
    assert report.spec.sizing is not None
    sizing = resolve(report.spec.sizing, report, {}, costs=report.unit_costs)
    assert sizing.memory_per_user == 50264
    assert sizing.sources["memory_per_user"] == "report: per-unit costs, slope over 3"
