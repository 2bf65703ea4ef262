"""`status.variants`: each variant's state, ceiling and change against the baseline.

The operator's sink (`plimsoll.controller.status`) keeps the list as the run goes:
every variant Pending at the start, Running when it starts, Succeeded or Failed
with its ceiling and range when it ends, and at the end of the run the change
against the baseline with its verdict, taken from the run's comparison
(`plimsoll.decide.comparison`, the noise rule in `plimsoll.decide.difference`).
Pure: each function returns a new list.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.comparison import Comparison
from plimsoll.api.status import Ceiling, VariantState, VariantStatus


def pending_variants(names: Sequence[str]) -> list[VariantStatus]:
    """The list a run starts with: one Pending entry per variant, in the spec's order."""
    return [VariantStatus(name=name) for name in names]


def _with(rows: Sequence[VariantStatus], name: str, row: VariantStatus) -> list[VariantStatus]:
    if not any(r.name == name for r in rows):
        return [*rows, row]
    return [row if r.name == name else r for r in rows]


def variant_started(rows: Sequence[VariantStatus], name: str) -> list[VariantStatus]:
    """`name` is starting (again, on a resumed run: its earlier figures are dropped)."""
    return _with(rows, name, VariantStatus(name=name, state=VariantState.RUNNING))


def variant_finished(rows: Sequence[VariantStatus], ceiling: Ceiling) -> list[VariantStatus]:
    """`ceiling.variant` ended: its ceiling and range; Failed when it stopped early (a
    variant whose every level passed did all it was asked: Succeeded, "at least")."""
    done = ceiling.complete or ceiling.every_level_passed
    state = VariantState.SUCCEEDED if done else VariantState.FAILED
    row = VariantStatus(
        name=ceiling.variant,
        state=state,
        ceiling=ceiling.level,
        unit=ceiling.unit,
        last_pass=ceiling.low,
        first_fail=ceiling.high,
        limited_by=ceiling.limited_by,
    )
    return _with(rows, ceiling.variant, row)


def run_ended(
    rows: Sequence[VariantStatus], ceilings: Sequence[Ceiling], comparison: Comparison | None
) -> list[VariantStatus]:
    """The list once the run is over: every ceiling in, a variant the run stopped in the
    middle of Failed (no ceiling came), and the changes against the baseline."""
    for ceiling in ceilings:
        rows = variant_finished(rows, ceiling)
    rows = [
        r.model_copy(update={"state": VariantState.FAILED})
        if r.state is VariantState.RUNNING
        else r
        for r in rows
    ]
    return compared(rows, comparison) if comparison is not None else rows


def compared(rows: Sequence[VariantStatus], comparison: Comparison) -> list[VariantStatus]:
    """The change against the baseline and its verdict, per variant the comparison has
    (rounded to a tenth of a percent: the status is read by people and `kubectl`)."""
    by_name = {v.name: v for v in comparison.variants}
    out = []
    for row in rows:
        found = by_name.get(row.name)
        if found is None:
            out.append(row)
            continue
        change = None if found.delta_percent is None else round(found.delta_percent, 1)
        out.append(row.model_copy(update={"delta_percent": change, "verdict": found.difference}))
    return out
