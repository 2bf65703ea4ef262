"""Per-unit costs: what one more user (or one more request per second) costs the target.

Read off the passing steps of each variant as the slope of memory and CPU
against the level (least squares), so a fixed baseline (the runtime, caches)
does not inflate the figure the way dividing by the level would. The report's
assembly puts them in the report; the sizing logic and the reader use them to see why
the ceiling is where it is. Memory per held stream, which the streams probe
measures before the search, is listed beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.run_record import RunRecord
from plimsoll.api.step import StepResult, Verdict
from plimsoll.api.unit_cost import UnitCost


def least_squares_slope(points: Sequence[tuple[float, float]]) -> float | None:
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    cov = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return cov / var


@dataclass(frozen=True)
class Slopes:
    """One variant's costs per unit of load, from its passing steps: the figures the
    report shows (`unit_costs`) and the gate remembers with each run (`HistoryEntry`)."""

    cpu_cores: float | None = None  # cores per request/s (CPU-seconds a request) or per user
    memory_bytes: float | None = None  # working-set bytes per request/s or per user
    cpu_points: int = 0
    memory_points: int = 0


def slopes(steps: Sequence[StepResult]) -> Slopes:
    """The least-squares slopes of the target's CPU and peak memory over the level of
    `steps`' passing ones (one variant's); None where fewer than two levels were read."""
    passing = [s for s in steps if s.judgement.verdict is Verdict.PASS and s.target is not None]
    memory = [
        (float(s.level), float(s.target.memory_max_bytes))
        for s in passing
        if s.target is not None and s.target.memory_max_bytes is not None
    ]
    cpu = [
        (float(s.level), s.target.cpu_mean_cores)
        for s in passing
        if s.target is not None and s.target.cpu_mean_cores is not None
    ]
    return Slopes(least_squares_slope(cpu), least_squares_slope(memory), len(cpu), len(memory))


def _variant_costs(variant: str, steps: Sequence[StepResult], unit: str) -> list[UnitCost]:
    per = "user" if unit == "users" else "request/s"
    found = slopes(steps)
    costs: list[UnitCost] = []
    basis = f"slope over {{n}} passing steps ({variant})"
    memory_slope = found.memory_bytes
    if memory_slope is not None:
        costs.append(
            UnitCost(
                variant=variant,
                name=f"memory per {per}",
                value=round(memory_slope, 1),
                unit="bytes",
                basis=basis.format(n=found.memory_points),
            )
        )
    cpu_slope = found.cpu_cores
    if cpu_slope is not None:
        # cores per request/s is CPU-seconds per request: shown in milliseconds.
        name, value, shown = (
            ("CPU per request", cpu_slope * 1000, "CPU-ms")
            if unit == "rps"
            else ("CPU per user", cpu_slope * 1000, "millicores")
        )
        costs.append(
            UnitCost(
                variant=variant,
                name=name,
                value=round(value, 4),
                unit=shown,
                basis=basis.format(n=found.cpu_points),
            )
        )
    return costs


def unit_costs(report: RunRecord) -> list[UnitCost]:
    unit = report.spec.unit
    variants = sorted({s.variant for s in report.steps})
    costs: list[UnitCost] = []
    for variant in variants:
        costs.extend(
            _variant_costs(variant, [s for s in report.steps if s.variant == variant], unit)
        )
    # Measured by the streams probe before the search, not read off the steps.
    costs.extend(
        UnitCost(
            variant=m.variant,
            name="memory per held stream",
            value=m.bytes_per_stream,
            unit="bytes",
            basis=m.basis,
        )
        for m in report.stream_memory
    )
    return costs
