"""The shapes' cost table: each measured shape's ceiling, price and pods for the peak.

Called by the runner when a run with `spec.shapes` ends (`shape_rows`), and by the
guided search between shapes (`measured_of`, what `plimsoll.decide.shape_search`
needs of a shape). Pure arithmetic over the report's ceilings and step records:
cost per hour from `spec.cost`, cost per 1,000 units of load at the ceiling, and,
when `spec.sizing` is set, the replicas the existing sizing rules plan for
`sizing.peak` over `sizing.zones` (a zone's loss included) with their monthly cost.
The words (the headline, the Markdown table) are `plimsoll.report.shapes`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from plimsoll.api.run_record import RunRecord
from plimsoll.api.shapes import (
    HOURS_PER_MONTH,
    ShapeResult,
    ShapeTable,
    shape_label,
    shape_name,
)
from plimsoll.api.sizing import SizingInput, SizingSpec
from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.api.target import PodShape
from plimsoll.decide.shape_search import MeasuredShape, cost_per_unit
from plimsoll.decide.sizing import plan_deployment
from plimsoll.decide.unit_costs import least_squares_slope


def measured_of(shape: PodShape, ceiling: Ceiling, records: Sequence[StepRecord]) -> MeasuredShape:
    """A shape's ceiling with the CPU and memory its passing full trials at that level
    used (means), for the guided search's predictions."""
    at = [
        r
        for r in records
        if r.variant == ceiling.variant
        and r.level == ceiling.level
        and r.kind is TrialKind.FULL
        and r.verdict is Verdict.PASS
    ]
    cpu = [r.cpu_cores for r in at if r.cpu_cores is not None]
    memory = [float(r.memory_bytes) for r in at if r.memory_bytes is not None]
    passed = [
        r
        for r in records
        if r.variant == ceiling.variant
        and r.verdict is Verdict.PASS
        and (ceiling.level is None or r.level <= ceiling.level)
    ]
    return MeasuredShape(
        shape=shape,
        level=ceiling.level,
        limited_by=ceiling.limited_by,
        cpu_used=fmean(cpu) if cpu else None,
        memory_used=fmean(memory) if memory else None,
        cpu_slope=least_squares_slope(
            [(float(r.level), r.cpu_cores) for r in passed if r.cpu_cores is not None]
        ),
        memory_slope=least_squares_slope(
            [(float(r.level), float(r.memory_bytes)) for r in passed if r.memory_bytes is not None]
        ),
    )


def replicas(sizing: SizingSpec, per_pod: int, unit: str) -> int:
    """Pods the sizing rules plan for `sizing.peak` at a ceiling of `per_pod`."""
    planned = SizingInput.model_validate({**sizing.model_dump(), "per_pod": per_pod, "unit": unit})
    return plan_deployment(planned).pods


def shapes_measured(report: RunRecord, table: ShapeTable) -> list[PodShape]:
    """The shapes of the run, in the order measured: the spec's list, or the guided
    search's choices."""
    shapes = report.spec.shapes
    if shapes is not None and shapes.explicit is not None:
        return list(shapes.explicit)
    return list(table.chosen)


def shape_rows(report: RunRecord, table: ShapeTable) -> ShapeTable:
    """`table` with one row per measured shape and the cheapest marked."""
    spec = report.spec
    by_name = {c.variant: c for c in report.ceilings}
    rows = []
    for shape in shapes_measured(report, table):
        name = shape_name(shape)
        ceiling = by_name.get(name)
        if ceiling is None:
            continue  # not reached: the run stopped before this shape
        hourly = spec.cost.per_hour(shape)
        per_unit = cost_per_unit(spec.cost, shape, ceiling.level)
        pods = monthly = None
        if spec.sizing is not None and ceiling.level:
            pods = replicas(spec.sizing, ceiling.level, ceiling.unit)
            monthly = pods * hourly * HOURS_PER_MONTH
        rows.append(
            ShapeResult(
                name=name,
                label=shape_label(shape),
                cpu=shape.cpu,
                memory=shape.memory,
                ceiling=ceiling.level,
                unit=ceiling.unit,
                complete=ceiling.complete,
                limited_by=ceiling.limited_by,
                headroom=ceiling.headroom.summary,
                predicted=table.predicted.get(name),
                cost_per_hour=hourly,
                cost_per_thousand=None if per_unit is None else per_unit * 1000,
                replicas=pods,
                monthly_cost=monthly,
            )
        )
    priced = [r for r in rows if r.cost_per_thousand is not None]
    cheapest = min(priced, key=lambda r: r.cost_per_thousand or 0.0) if priced else None
    if cheapest is not None:
        rows = [r.model_copy(update={"cheapest": r is cheapest}) for r in rows]
    return table.model_copy(update={"rows": rows, "cheapest": cheapest.name if cheapest else None})
