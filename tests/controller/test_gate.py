"""The regression gate as the operator writes it: status.history, status.regression, the
Regressed condition and its Event, and the result gauges on /metrics. The status writer is
real; nothing here talks to an API server (the gate only prepares the final write)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plimsoll.api.gate import HistoryEntry, Regression, RegressionMethod
from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import (
    CapacityTestStatus,
    Ceiling,
    ConditionStatus,
    ConditionType,
    Phase,
    Reason,
    VariantState,
    VariantStatus,
)
from plimsoll.controller.events import EventRecorder, EventType
from plimsoll.controller.gate import apply_gate
from plimsoll.controller.operator_metrics import OperatorMetrics
from plimsoll.controller.status import StatusWriter
from plimsoll.kube.client import KubeClient
from plimsoll.report.markdown import render_markdown

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def spec(regression: Regression | None, history_limit: int = 3) -> CapacityTest:
    return CapacityTest.model_validate(
        {
            "metadata": {"name": "gate"},
            "spec": {
                "target": {
                    "image": "registry.example/gw:2.0",
                    "resources": {"cpu": "1", "memory": "512Mi"},
                },
                "workload": {"mix": [{"name": "get", "path": "/"}]},
                "historyLimit": history_limit,
                **(
                    {"regression": regression.model_dump(by_alias=True)}
                    if regression is not None
                    else {}
                ),
            },
        }
    )


def report(level: int | None, high: int | None, ended: datetime) -> RunReport:
    test = spec(None)
    ceiling = Ceiling(level=level, low=level, high=high, unit="rps", complete=True)
    return RunReport(
        test_name="gate",
        spec=test.spec,
        started_at=ended - timedelta(minutes=30),
        ended_at=ended,
        platform="kubernetes",
        outcome=Outcome.SUCCEEDED,
        ceilings=[ceiling],
        ceiling=ceiling,
    )


def writer_with(history: list[HistoryEntry], run_id: str = "run-new") -> StatusWriter:
    status = CapacityTestStatus(
        phase=Phase.RUNNING, run_id=run_id, observed_generation=4, history=history
    )
    client = KubeClient("http://127.0.0.1:9")  # never called: the gate only prepares a write
    owner = {"apiVersion": "plimsoll.dev/v1alpha1", "kind": "CapacityTest", "metadata": {}}
    return StatusWriter(client, "perf", "gate", status, events=EventRecorder(client, owner))


def previous(level: int, spread: list[int] | None = None) -> HistoryEntry:
    return HistoryEntry(run_id="run-old", finished_at=T0, level=level, spread=spread or [])


def regressed_condition(writer: StatusWriter) -> tuple[ConditionStatus, Reason, str] | None:
    for c in writer.status.conditions:
        if c.type is ConditionType.REGRESSED:
            return c.status, c.reason, c.message
    return None


def test_a_regression_sets_the_condition_the_change_and_a_warning_event() -> None:
    writer = writer_with([previous(1000, [980, 1000])])
    test = spec(Regression(baseline="previous", threshold=0.10))
    apply_gate(
        writer, report(700, 750, T0 + timedelta(days=1)), test.spec, {"default": "sha256:ab"}
    )

    status = writer.status
    assert [v.regressed for v in status.regression] == [True]
    assert status.change == "-30% REGRESSED"
    condition = regressed_condition(writer)
    assert condition is not None
    assert condition[:2] == (ConditionStatus.TRUE, Reason.REGRESSED)
    assert "700 rps vs 1000 rps (previous run run-old), -30%: regressed" in condition[2]
    [event] = writer._pending
    assert event.type is EventType.WARNING
    assert event.reason == "Regressed"
    newest = status.history[-1]
    assert (newest.run_id, newest.level, newest.image, newest.generation) == (
        "run-new",
        700,
        "sha256:ab",
        4,
    )


def test_the_first_gated_run_has_no_baseline_and_later_ones_compare_with_it() -> None:
    test = spec(Regression())
    first = writer_with([], run_id="r1")
    apply_gate(first, report(1000, 1100, T0), test.spec, {})
    assert regressed_condition(first) is not None
    assert regressed_condition(first)[:2] == (ConditionStatus.FALSE, Reason.NO_BASELINE)  # type: ignore[index]

    second = writer_with(first.status.history, run_id="r2")
    apply_gate(second, report(980, 1050, T0 + timedelta(days=1)), test.spec, {})
    assert regressed_condition(second)[:2] == (ConditionStatus.FALSE, Reason.NO_REGRESSION)  # type: ignore[index]
    assert second.status.change == "-2%"
    assert [e.run_id for e in second.status.history] == ["r1", "r2"]


def test_history_is_kept_without_a_gate_and_bounded() -> None:
    test = spec(None, history_limit=3)
    history: list[HistoryEntry] = []
    for day in range(5):
        writer = writer_with(history, run_id=f"r{day}")
        apply_gate(writer, report(100 + day, 120, T0 + timedelta(days=day)), test.spec, {})
        history = writer.status.history
        assert regressed_condition(writer) is None
        assert writer.status.change == ""
    assert [e.run_id for e in history] == ["r2", "r3", "r4"]


def test_result_gauges_carry_the_ceiling_its_range_and_the_regression() -> None:
    writer = writer_with([previous(1000)])
    test = spec(Regression())
    apply_gate(writer, report(700, 750, T0 + timedelta(days=1)), test.spec, {})
    status = writer.status
    status.ceiling = report(700, 750, T0).ceiling
    status.phase = Phase.SUCCEEDED
    status.completion_time = T0 + timedelta(days=1)
    metrics = OperatorMetrics()
    metrics.record_result("perf", "gate", status)
    text = metrics.render()
    labels = 'namespace="perf",name="gate",variant="default"'
    assert f'plimsoll_ceiling{{{labels},unit="rps"}} 700' in text
    assert f'plimsoll_ceiling_low{{{labels},unit="rps"}} 700' in text
    assert f'plimsoll_ceiling_high{{{labels},unit="rps"}} 750' in text
    assert f"plimsoll_regressed{{{labels}}} 1" in text
    stamp = int((T0 + timedelta(days=1)).timestamp())
    assert (
        f'plimsoll_last_success_timestamp_seconds{{namespace="perf",name="gate"}} {stamp}' in text
    )
    metrics.results.forget("perf", "gate")
    assert "plimsoll_ceiling{" not in metrics.render()


def test_result_gauges_carry_each_finished_variants_ceiling() -> None:
    status = CapacityTestStatus(
        phase=Phase.FAILED,
        variants=[
            VariantStatus(
                name="embedded",
                state=VariantState.SUCCEEDED,
                ceiling=120,
                unit="users",
                last_pass=120,
                first_fail=130,
            ),
            VariantStatus(name="postgres", state=VariantState.FAILED, unit="users", first_fail=40),
            VariantStatus(name="sharded", state=VariantState.PENDING),  # never ran: no series
        ],
    )
    metrics = OperatorMetrics()
    metrics.record_result("perf", "pair", status)
    text = metrics.render()
    embedded = 'namespace="perf",name="pair",variant="embedded",unit="users"'
    postgres = 'namespace="perf",name="pair",variant="postgres",unit="users"'
    assert f"plimsoll_ceiling{{{embedded}}} 120" in text
    assert f"plimsoll_ceiling_high{{{embedded}}} 130" in text
    assert f"plimsoll_ceiling_high{{{postgres}}} 40" in text
    assert f"plimsoll_ceiling{{{postgres}}}" not in text  # no level passed
    assert "sharded" not in text


def test_the_changepoint_method_flags_a_new_drop_and_puts_the_changes_in_the_report() -> None:
    # 15 steady runs on api:1, then api:2 a tenth lower: two runs so far, now a third (two
    # were not yet significant; the third makes the drop one).
    levels = [1000, 1012, 991, 1005, 996, 1019, 987, 1003, 1010, 994, 1008, 999, 985, 1015, 1001]
    history = [
        HistoryEntry(run_id=f"r{i}", finished_at=T0 + timedelta(days=i), level=level, image="api:1")
        for i, level in enumerate(levels)
    ]
    history += [
        HistoryEntry(run_id=f"r{i}", finished_at=T0 + timedelta(days=i), level=level, image="api:2")
        for i, level in ((15, 902), (16, 908))
    ]
    writer = writer_with(history)
    test = spec(Regression(method=RegressionMethod.CHANGEPOINT), history_limit=20)
    finished = report(895, 920, T0 + timedelta(days=17))
    apply_gate(writer, finished, test.spec, {"default": "api:2"})

    [verdict] = writer.status.regression
    assert verdict.method is RegressionMethod.CHANGEPOINT
    assert verdict.regressed
    condition = regressed_condition(writer)
    assert condition is not None
    assert condition[:2] == (ConditionStatus.TRUE, Reason.REGRESSED)
    assert "ceiling −10% ± " in condition[2]
    assert "at run r15 (16 of 18), image api:2" in condition[2]
    assert writer.status.change == "-10% REGRESSED"
    assert [p.run_id for p in finished.changepoints] == ["r15"]
    assert "## Changepoints" in render_markdown(finished)
    assert finished.changepoints[0].sentence in render_markdown(finished)
