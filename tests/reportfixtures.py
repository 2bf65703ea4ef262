"""Small report.json fixtures: runs with known ceilings, steps and costs, built in code.

Shared by the comparison tests (decide), the report rendering tests and the
`plimsoll compare` CLI tests, so each states only the figures it is about.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from plimsoll.api.gate import Changepoint
from plimsoll.api.report import Outcome, RunReport, UnitCost
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import Ceiling
from plimsoll.api.step import Judgement, LimitedBy, ResourceUsage, StepResult, Verdict
from plimsoll.decide.step_summary import record_of

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@dataclass
class Run:
    """One variant's outcome: the ceiling, its range, and the full-length steps behind it."""

    level: int | None
    high: int | None
    steps: list[tuple[int, Verdict, float]] = field(default_factory=list)  # level, verdict, cpu
    value: float | None = None
    cpu_per_request_ms: float | None = None
    limited_by: LimitedBy = LimitedBy.CPU


def _spec(variants: dict[str, Run], value_unit: str) -> dict[str, Any]:
    listed = [
        {
            "name": name,
            **({"value": run.value, "valueUnit": value_unit} if run.value is not None else {}),
        }
        for name, run in variants.items()
        if name != "default"
    ]
    return {
        "target": {"command": ["./server"], "resources": {"cpu": "1", "memory": "256Mi"}},
        "workload": {"mix": [{"name": "get", "path": "/"}]},
        "variants": listed,
    }


def _step(index: int, variant: str, level: int, verdict: Verdict, cpu: float) -> StepResult:
    start = T0 + timedelta(seconds=10 * index)
    return StepResult(
        index=index,
        level=level,
        variant=variant,
        started_at=start,
        ended_at=start + timedelta(seconds=2),
        duration=2.0,
        target=ResourceUsage(source="cgroup", cpu_mean_cores=cpu, memory_max_bytes=50 * 2**20),
        judgement=Judgement(verdict=verdict),
    )


def make_report(variants: dict[str, Run], name: str = "fixture", value_unit: str = "") -> RunReport:
    """A finished run: `variants` maps a variant's name ('default' for none) to its outcome."""
    test = CapacityTest.model_validate(
        {"metadata": {"name": name}, "spec": _spec(variants, value_unit)}
    )
    report = RunReport(
        test_name=name, spec=test.spec, started_at=T0, platform="local", outcome=Outcome.SUCCEEDED
    )
    for variant, run in variants.items():
        for level, verdict, cpu in run.steps:
            step = _step(len(report.steps), variant, level, verdict, cpu)
            report.add_step(step, record_of(step))
        report.ceilings.append(
            Ceiling(
                level=run.level,
                unit="rps",
                low=run.level,
                high=run.high,
                spread=[run.level] * 2 if run.level is not None else [],
                limited_by=run.limited_by,
                complete=True,
                variant=variant,
            )
        )
        if run.cpu_per_request_ms is not None:
            report.unit_costs.append(
                UnitCost(
                    variant=variant,
                    name="CPU per request",
                    value=run.cpu_per_request_ms,
                    unit="CPU-ms",
                )
            )
    report.ceiling = report.ceilings[0]
    return report


def ladder(ceiling: int, high: int, cpu_per_request: float) -> list[tuple[int, Verdict, float]]:
    """Steps of a doubling search from 25: passes up to `ceiling`, a failure at `high`."""
    steps = []
    level = 25
    while level < ceiling:
        steps.append((level, Verdict.PASS, level * cpu_per_request))
        level *= 2
    steps.append((high, Verdict.FAIL, high * cpu_per_request))
    steps += [(ceiling, Verdict.PASS, ceiling * cpu_per_request)] * 2
    return steps


def save(report: RunReport, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.json"
    path.write_text(report.model_dump_json(by_alias=True, indent=2))
    return path


# A change the gate's changepoint method found in a test's history (as report.changepoints).
CHANGE = Changepoint(
    run_id="1a2b3c4d",
    index=12,
    runs=15,
    image="api:2.7.0",
    before=400.0,
    after=300.0,
    change=-0.25,
    margin=0.03,
    pvalue=0.0,
    sentence="ceiling −25% ± 3% at run 1a2b3c4d (13 of 15), image api:2.7.0",
)
