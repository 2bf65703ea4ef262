"""The comparison table: each contender's ceiling against the baseline's, and why.

A contender is one variant of a run, or one run of a series (`plimsoll
compare`). For each it gives the ceiling, range, spread and limiting resource;
the change against the baseline with its verdict (higher, lower, within noise:
the rule is in `plimsoll.decide.difference`); the latency quantiles, CPU and
memory at the highest level every contender passed (the one level where their
figures mean the same thing); the per-unit costs and their change; and, when
contenders declare a numeric `value` (10 sensors), what one unit of it costs.

Called by the runner at the end of a run and by `plimsoll compare`; pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from plimsoll.api.comparison import (
    ComparedVariant,
    Comparison,
    CostDelta,
    Difference,
    FeatureCost,
    Figures,
)
from plimsoll.api.run_record import RunRecord
from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.api.unit_cost import UnitCost
from plimsoll.decide.difference import NOISE_RULE, band_of, delta_percent, difference


@dataclass(frozen=True)
class Contender:
    """What the comparison needs of one variant or one run: its ceiling, its steps, its costs."""

    name: str
    ceiling: Ceiling
    records: Sequence[StepRecord] = ()
    costs: Sequence[UnitCost] = ()
    value: float | None = None
    value_unit: str = ""
    source: str = ""
    unit: str = ""


def contenders_of(
    report: RunRecord, costs: Sequence[UnitCost], prefix: str = "", source: str = ""
) -> list[Contender]:
    """One contender per variant of `report` with its per-unit `costs`, named `prefix` +
    the variant's name (or the prefix alone for a run without variants)."""
    records = report.records
    contenders = []
    for ceiling in report.ceilings:
        variants = report.spec.compared_variants
        variant = next((v for v in variants if v.name == ceiling.variant), None)
        if prefix:
            name = prefix if ceiling.variant == "default" else f"{prefix}:{ceiling.variant}"
        else:
            name = ceiling.variant
        contenders.append(
            Contender(
                name=name,
                ceiling=ceiling,
                records=[r for r in records if r.variant == ceiling.variant],
                costs=[c for c in costs if c.variant == ceiling.variant],
                value=variant.value if variant is not None else None,
                value_unit=variant.value_unit if variant is not None else "",
                source=source,
                unit=ceiling.unit,
            )
        )
    return contenders


def _passing_full(contender: Contender, level: int) -> list[StepRecord]:
    return [
        r
        for r in contender.records
        if r.level == level and r.kind is TrialKind.FULL and r.verdict is Verdict.PASS
    ]


def common_level(contenders: Sequence[Contender]) -> int | None:
    """The highest level every contender passed in a full-length trial."""
    sets = [
        {r.level for r in c.records if r.kind is TrialKind.FULL and r.verdict is Verdict.PASS}
        for c in contenders
    ]
    shared = set.intersection(*sets) if sets else set()
    return max(shared) if shared else None


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def figures_at(contender: Contender, level: int) -> Figures:
    """Means over the contender's passing full-length trials at `level`."""
    steps = _passing_full(contender, level)
    return Figures(
        level=level,
        p50_ms=_mean([s.p50_ms for s in steps]),
        p95_ms=_mean([s.p95_ms for s in steps]),
        p99_ms=_mean([s.p99_ms for s in steps]),
        cpu_cores=_mean([s.cpu_cores for s in steps]),
        memory_bytes=_mean([s.memory_bytes for s in steps]),
    )


def _costs(contender: Contender, baseline: Contender) -> list[CostDelta]:
    base = {c.name: c.value for c in baseline.costs}
    out = []
    for cost in contender.costs:
        base_value = base.get(cost.name)
        change = None
        if base_value is not None and base_value != 0:
            change = (cost.value - base_value) / abs(base_value) * 100.0
        out.append(
            CostDelta(
                name=cost.name,
                value=cost.value,
                unit=cost.unit,
                baseline_value=base_value,
                delta_percent=change,
            )
        )
    return out


def _feature_costs(contender: Contender, baseline: Contender) -> list[FeatureCost]:
    if contender.value is None or baseline.value is None or contender.value == baseline.value:
        return []
    per = contender.value_unit or baseline.value_unit or "unit of value"
    per = per.removesuffix("s") if per.endswith("s") and not per.endswith("ss") else per
    step = contender.value - baseline.value
    base = {c.name: c for c in baseline.costs}
    out = []
    for cost in contender.costs:
        if cost.name in base:
            slope = (cost.value - base[cost.name].value) / step
            out.append(FeatureCost(name=f"{cost.name} per {per}", value=slope, unit=cost.unit))
    return out


def compare(contenders: Sequence[Contender], baseline: str | None = None) -> Comparison:
    """The comparison of `contenders` against the one named `baseline` (default: the first)."""
    if not contenders:
        raise ValueError("nothing to compare: no ceilings")
    chosen = [c for c in contenders if c.name == baseline] if baseline else [contenders[0]]
    if not chosen:
        raise ValueError(f"baseline {baseline!r} is none of {[c.name for c in contenders]}")
    base = chosen[0]
    units = {c.unit or c.ceiling.unit for c in contenders}
    if len(units) > 1:
        raise ValueError(f"ceilings in different units cannot be compared: {sorted(units)}")
    base_band = band_of(base.ceiling, base.records)
    level = common_level(contenders)
    rows = []
    for contender in contenders:
        ceiling = contender.ceiling
        band = band_of(ceiling, contender.records)
        is_base = contender is base
        rows.append(
            ComparedVariant(
                name=contender.name,
                source=contender.source,
                value=contender.value,
                value_unit=contender.value_unit,
                ceiling=ceiling.level,
                **ceiling.range_fields(),
                band=band,
                delta_percent=delta_percent(base.ceiling.level, ceiling.level),
                difference=(Difference.BASELINE if is_base else difference(base_band, band)),
                at_common_level=figures_at(contender, level) if level is not None else None,
                costs=_costs(contender, base),
                feature_costs=[] if is_base else _feature_costs(contender, base),
            )
        )
    return Comparison(
        unit=units.pop(), baseline=base.name, common_level=level, variants=rows, rule=NOISE_RULE
    )
