"""The shapes' cost table: price per hour and per 1,000 units, replicas for the peak by the
sizing rules, the cheapest marked; and what the guided search reads of a measured shape."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from plimsoll.api.report import RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.shapes import HOURS_PER_MONTH, ShapeTable
from plimsoll.api.status import Ceiling, Headroom
from plimsoll.api.step import LimitedBy, StepRecord, TrialKind, Verdict
from plimsoll.api.target import PodShape
from plimsoll.decide.shape_costs import measured_of, replicas, shape_rows

MIB = 2**20
T0 = datetime(2026, 12, 1, tzinfo=UTC)


def report(sizing: dict[str, Any] | None = None) -> RunReport:
    spec: dict[str, Any] = {
        "target": {"command": ["./server"], "resources": {"cpu": "1", "memory": "512Mi"}},
        "workload": {"mix": [{"name": "get", "path": "/"}]},
        "shapes": {
            "explicit": [
                {"cpu": "1", "memory": "512Mi"},
                {"cpu": "1", "memory": "1Gi"},
                {"cpu": "2", "memory": "1Gi"},
            ]
        },
        "cost": {"perCpuHour": 0.04, "perGibHour": 0.005},
    }
    if sizing:
        spec["sizing"] = sizing
    test = CapacityTest.model_validate(
        {
            "apiVersion": "plimsoll.dev/v1alpha1",
            "kind": "CapacityTest",
            "metadata": {"name": "shapes"},
            "spec": spec,
        }
    )
    run = RunReport(test_name="shapes", spec=test.spec, started_at=T0, platform="local")
    for name, level, limit in (
        ("c1-m512mi", 200, LimitedBy.MEMORY),
        ("c1-m1gi", 420, LimitedBy.CPU),
        ("c2-m1gi", 800, LimitedBy.CPU),
    ):
        run.ceilings.append(
            Ceiling(
                level=level,
                unit="rps",
                complete=True,
                variant=name,
                limited_by=limit,
                headroom=Headroom(summary="some room"),
            )
        )
    return run


def test_each_shape_is_priced_and_the_cheapest_per_unit_is_marked() -> None:
    table = shape_rows(report(), ShapeTable())
    rows = {r.name: r for r in table.rows}
    assert list(rows) == ["c1-m512mi", "c1-m1gi", "c2-m1gi"]
    small = rows["c1-m512mi"]
    assert small.cost_per_hour == pytest.approx(0.04 + 0.0025)
    assert small.cost_per_thousand == pytest.approx((0.04 + 0.0025) / 200 * 1000)
    # Per unit an hour: 0.0425 / 200 (1 CPU / 512Mi), 0.045 / 420 (1 CPU / 1Gi) and
    # 0.085 / 800 (2 CPU / 1Gi): the last is the cheapest, by 0.8% over the second.
    assert rows["c2-m1gi"].cost_per_thousand == pytest.approx(0.085 / 800 * 1000)
    assert table.cheapest == "c2-m1gi"
    assert [r.name for r in table.rows if r.cheapest] == ["c2-m1gi"]
    assert small.replicas is None
    assert small.monthly_cost is None


def test_replicas_follow_the_sizing_rules_with_a_zone_loss() -> None:
    sizing = {"peak": 2000, "zones": 3, "utilisation": "50%"}
    table = shape_rows(report(sizing), ShapeTable())
    small = next(r for r in table.rows if r.name == "c1-m512mi")
    # 2000 / (200 × 50%) = 20 pods needed; over 3 zones surviving one loss: 10 per zone.
    assert small.replicas == 30
    assert small.monthly_cost == pytest.approx(30 * small.cost_per_hour * HOURS_PER_MONTH)
    assert replicas(report(sizing).spec.sizing, 200, "rps") == 30  # type: ignore[arg-type]


def test_a_shape_without_a_ceiling_has_no_price_per_unit_and_is_not_cheapest() -> None:
    run = report()
    run.ceilings[0] = run.ceilings[0].model_copy(update={"level": None})
    table = shape_rows(run, ShapeTable())
    first = table.rows[0]
    assert first.cost_per_thousand is None
    assert not first.cheapest
    assert table.cheapest != first.name


def test_a_shape_the_run_did_not_reach_is_left_out() -> None:
    run = report()
    run.ceilings.pop()
    assert [r.name for r in shape_rows(run, ShapeTable()).rows] == ["c1-m512mi", "c1-m1gi"]


def record(index: int, level: int, verdict: Verdict, cpu: float, memory: int) -> StepRecord:
    return StepRecord(
        index=index,
        level=level,
        variant="c1-m512mi",
        kind=TrialKind.FULL,
        attempt=1,
        duration=60.0,
        verdict=verdict,
        cpu_cores=cpu,
        memory_bytes=memory,
    )


def test_the_search_reads_the_usage_of_the_passing_full_trials_at_the_ceiling() -> None:
    ceiling = Ceiling(
        level=200, unit="rps", complete=True, variant="c1-m512mi", limited_by=LimitedBy.MEMORY
    )
    records = [
        record(0, 100, Verdict.PASS, 0.1, 200 * MIB),
        record(1, 200, Verdict.PASS, 0.2, 480 * MIB),
        record(2, 200, Verdict.PASS, 0.22, 490 * MIB),
        record(3, 220, Verdict.FAIL, 0.25, 512 * MIB),
    ]
    shape = PodShape(cpu=1.0, memory=512 * MIB)
    measured = measured_of(shape, ceiling, records)
    assert measured.level == 200
    assert measured.limited_by is LimitedBy.MEMORY
    assert measured.cpu_used == pytest.approx(0.21)
    assert measured.memory_used == pytest.approx(485 * MIB)
