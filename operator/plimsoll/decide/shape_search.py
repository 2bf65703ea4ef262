"""The guided shape search: from the shapes measured so far to the next shape, or the end.

Called by `plimsoll.run.shapes` after each shape's ceiling (and by the benchmark
`bench/shapes.py` against simulated targets). Pure: a function of the search's
grid, the prices and the measured shapes, so a resumed run chooses the same
shapes again.

The rule follows what limited the cheapest shape per unit of load so far:
memory with CPU idle → grow memory or shrink CPU; CPU with memory to spare →
grow CPU or shrink memory; neither (latency-bound) → stop, since more resources
will not help. Of those neighbours on the grid, the one predicted cheapest per
unit is next. The prediction scales each resource's measured cost per unit
(usage = fixed + per-unit × level, fitted over the shapes measured, or from each
shape's own trials while one shape is all there is) to the new
shape's limits, at the share of a limit the target reached where that resource
limited it. The search stops when the cheapest shape's neighbours are measured
(it is bracketed), when none of them is predicted within `CLOSE_ENOUGH` of it,
or at `maxShapes`. A predicted shape's trial search starts at the
prediction with a small factor (`predicted_search`), which is where the trials
are saved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.shapes import Cost, ShapeSearch, shape_label
from plimsoll.api.spec import Search
from plimsoll.api.step import LimitedBy
from plimsoll.api.target import PodShape
from plimsoll.decide.unit_costs import least_squares_slope

MIB = 2**20
CLOSE_ENOUGH = 1.10  # a neighbour predicted within 10% of the best is worth measuring
UNLIMITED_SHARE = 0.9  # a resource never seen limiting is assumed usable to this share


@dataclass(frozen=True)
class MeasuredShape:
    """What the search needs of one measured shape: its ceiling and the usage there."""

    shape: PodShape
    level: int | None
    limited_by: LimitedBy
    cpu_used: float | None = None  # cores at the ceiling
    memory_used: float | None = None  # bytes at the ceiling
    # Usage against level over the shape's own passing trials (least squares), when they
    # spanned two levels or more: what separates the fixed part from the cost per unit
    # while only one shape is measured.
    cpu_slope: float | None = None
    memory_slope: float | None = None


@dataclass(frozen=True)
class NextShape:
    shape: PodShape
    predicted: int | None  # None for the first shape: nothing to predict from
    why: str


@dataclass(frozen=True)
class ShapesDone:
    reason: str
    latency_bound: bool = False


def _geometric(low: float, high: float, steps: int) -> list[float]:
    if low == high:
        return [low]
    ratio = (high / low) ** (1 / (steps - 1))
    return [low * ratio**k for k in range(steps)]


def grid(search: ShapeSearch, start: PodShape) -> tuple[list[float], list[int]]:
    """The CPU sizes (whole millicores) and memory sizes (whole MiB) the search walks, with
    the start shape's own sizes among them."""
    cpus = {
        round(c * 1000) / 1000 for c in _geometric(search.cpu.min, search.cpu.max, search.steps)
    }
    mems = {
        max(4, round(m / MIB)) * MIB
        for m in _geometric(search.memory.min, search.memory.max, search.steps)
    }
    return sorted(cpus | {start.cpu}), sorted(mems | {start.memory})


def cost_per_unit(cost: Cost, shape: PodShape, level: int | float | None) -> float | None:
    """The hourly price of one unit of load carried by `shape` at `level`."""
    if level is None or level <= 0:
        return None
    return cost.per_hour(shape) / level


@dataclass(frozen=True)
class _Resource:
    """One resource's usage model: used = fixed + per_unit × level, reachable to `share`."""

    fixed: float
    per_unit: float
    share: float

    def capacity(self, limit: float) -> float:
        return max(0.0, self.share * limit - self.fixed) / self.per_unit


def _model(
    measured: Sequence[MeasuredShape],
    resource: LimitedBy,
    used_of: str,
    limit_of: str,
    slope_of: str,
) -> _Resource | None:
    points = [
        (float(m.level), float(getattr(m, used_of)))
        for m in measured
        if m.level and getattr(m, used_of) is not None
    ]
    if not points:
        return None
    shares = [
        getattr(m, used_of) / getattr(m.shape, limit_of)
        for m in measured
        if m.level and m.limited_by is resource and getattr(m, used_of) is not None
    ]
    share = min(1.0, sum(shares) / len(shares)) if shares else UNLIMITED_SHARE
    slope = least_squares_slope(points) if len({x for x, _ in points}) > 1 else None
    if slope is not None and slope > 0:
        mean_x = sum(x for x, _ in points) / len(points)
        mean_y = sum(y for _, y in points) / len(points)
        fixed = max(0.0, mean_y - slope * mean_x)
        return _Resource(fixed=fixed, per_unit=slope, share=share)
    own = [
        (float(m.level), float(getattr(m, used_of)), float(getattr(m, slope_of)))
        for m in measured
        if m.level and getattr(m, used_of) is not None and (getattr(m, slope_of) or 0) > 0
    ]
    if own:  # each shape's own slope: fixed = used - slope × level
        per_unit = sum(k for _, _, k in own) / len(own)
        fixed = sum(max(0.0, y - k * x) for x, y, k in own) / len(own)
        return _Resource(fixed=fixed, per_unit=per_unit, share=share)
    per_unit = sum(y / x for x, y in points) / len(points)
    return _Resource(fixed=0.0, per_unit=per_unit, share=share) if per_unit > 0 else None


def predict(measured: Sequence[MeasuredShape], shape: PodShape) -> int | None:
    """The ceiling `shape` should have, from the usage the measured shapes showed; None when
    no shape measured a ceiling with its usage."""
    cpu = _model(measured, LimitedBy.CPU, "cpu_used", "cpu", "cpu_slope")
    memory = _model(measured, LimitedBy.MEMORY, "memory_used", "memory", "memory_slope")
    bounds = []
    if cpu is not None:
        bounds.append(cpu.capacity(shape.cpu))
    if memory is not None:
        bounds.append(memory.capacity(shape.memory))
    if not bounds:
        return None
    return max(1, math.floor(min(bounds)))


def _neighbours(best: MeasuredShape, cpus: list[float], mems: list[int]) -> list[PodShape]:
    """The shapes next to `best` in the direction its limit points: grow what limited it,
    or shrink what sat idle."""
    i, j = cpus.index(best.shape.cpu), mems.index(best.shape.memory)
    if best.limited_by is LimitedBy.MEMORY:
        moves = [(i, j + 1), (i - 1, j)]
    else:
        moves = [(i + 1, j), (i, j - 1)]
    return [
        PodShape(cpu=cpus[a], memory=mems[b])
        for a, b in moves
        if 0 <= a < len(cpus) and 0 <= b < len(mems)
    ]


def cheapest(measured: Sequence[MeasuredShape], cost: Cost) -> MeasuredShape | None:
    """The measured shape with the lowest price per unit of load (None if none passed)."""
    priced = [(cost_per_unit(cost, m.shape, m.level), m) for m in measured]
    ranked = [(p, m) for p, m in priced if p is not None]
    return min(ranked, key=lambda pm: pm[0])[1] if ranked else None


def next_shape(
    search: ShapeSearch, start: PodShape, cost: Cost, measured: Sequence[MeasuredShape]
) -> NextShape | ShapesDone:
    """The next shape to measure, or why the search is over."""
    if not measured:
        return NextShape(start, None, f"the start shape, target.resources ({shape_label(start)})")
    best = cheapest(measured, cost)
    if best is None:
        return ShapesDone(f"no level passed at {shape_label(measured[-1].shape)}")
    label = shape_label(best.shape)
    if best.limited_by is LimitedBy.NEITHER:
        return ShapesDone(
            f"{label} is latency-bound (neither CPU nor memory limited it): more resources "
            "will not help",
            latency_bound=True,
        )
    if best.limited_by is LimitedBy.UNKNOWN:
        return ShapesDone(f"what limited {label} is unknown (no server metrics): no guide")
    if len(measured) >= search.max_shapes:
        return ShapesDone(f"measured maxShapes ({search.max_shapes}) shapes")
    cpus, mems = grid(search, start)
    seen = {(m.shape.cpu, m.shape.memory) for m in measured}
    candidates = [s for s in _neighbours(best, cpus, mems) if (s.cpu, s.memory) not in seen]
    if not candidates:
        return ShapesDone(
            f"{label} is the cheapest per unit and bracketed: its neighbours on the grid "
            "are measured or outside it"
        )
    best_price = cost_per_unit(cost, best.shape, best.level)
    assert best_price is not None  # `cheapest` only returns a shape with a ceiling
    priced = []
    for shape in candidates:
        level = predict(measured, shape)
        priced.append((cost_per_unit(cost, shape, level) or math.inf, shape, level))
    price, shape, level = min(priced, key=lambda p: p[0])
    if price > best_price * CLOSE_ENOUGH:
        return ShapesDone(
            f"{label} is the cheapest per unit: no neighbour is predicted within "
            f"{CLOSE_ENOUGH - 1:.0%} of it"
        )
    grow = "memory" if best.limited_by is LimitedBy.MEMORY else "CPU"
    return NextShape(
        shape, level, f"{label} was {best.limited_by.value}-bound: more {grow} per unit"
    )


def predicted_search(search: Search, predicted: int | None) -> Search:
    """The trial search for a shape whose ceiling is predicted: start at the prediction and
    grow (or shrink) by 1 + precision, so a prediction within the precision brackets the
    ceiling in two trials; the floor, limit, precision and repeats stay."""
    if predicted is None:
        return search
    start = min(search.limit - 1, max(search.floor, predicted))
    factor = min(search.factor, 1 + search.precision)
    return search.model_copy(update={"start": start, "factor": max(1.05, factor)})
