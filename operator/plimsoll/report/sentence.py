"""The ceiling in one sentence, the way capacity reports state it.

"1 CPU / 512 MiB sustains 2,350 modeled users; memory limited it, 6 MiB under
the limit with 30% CPU idle." Called by the runner for `report.summary`, which the live
view and report.md print, so every place says the same thing.
"""

from __future__ import annotations

from plimsoll.api.level_unit import unit_words
from plimsoll.api.run_record import RunRecord
from plimsoll.api.spec import CapacityTestSpec, PodShape
from plimsoll.api.status import Ceiling
from plimsoll.api.step import LimitedBy
from plimsoll.decide.confirmation import phrase


def format_cpu(cores: float) -> str:
    if cores >= 1 and float(cores).is_integer():
        return f"{int(cores)} CPU"
    return f"{cores:g} CPU"


def format_bytes(count: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(count) >= size:
            value = count / size
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    return f"{count:.0f} B"


def format_quantity(value: float, unit: str) -> str:
    """A per-unit cost in its unit, as people read it: memory in B/KiB/MiB/GiB (`280 KiB`,
    not `286748.4 bytes`), CPU (millicores, CPU-ms) to three significant digits."""
    if unit == "bytes":
        return format_bytes(value)
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.3g} {unit}"


def format_shape(shape: PodShape | None, pinned: bool | None) -> str:
    if shape is None:
        return "The service (shape unknown)"
    text = f"{format_cpu(shape.cpu)} / {format_bytes(shape.memory)}"
    return text + " (unpinned)" if pinned is False else text


def _headroom(ceiling: Ceiling) -> str:
    parts: list[str] = []
    if ceiling.headroom.memory_free_bytes is not None:
        parts.append(f"{format_bytes(ceiling.headroom.memory_free_bytes)} under the limit")
    if ceiling.headroom.cpu_idle_fraction is not None:
        parts.append(f"{ceiling.headroom.cpu_idle_fraction:.0%} CPU idle")
    return " with ".join(parts)


def ceiling_sentence(report: RunRecord, ceiling: Ceiling, spec: CapacityTestSpec) -> str:
    """`ceiling` in words; `spec` is its variant's spec (a variant may change the shape)."""
    shape = spec.target.resources if spec.target.url is None else None
    who = format_shape(shape, report.pinned)
    units = unit_words(ceiling.unit)
    prefix = f"[{ceiling.variant}] " if len(report.ceilings) > 1 else ""
    if ceiling.inconclusive:
        passed = (
            f"; {ceiling.level:,} {units} passed before that, a lower bound only"
            if ceiling.level is not None
            else ""
        )
        return f"{prefix}{who}: {ceiling.stop_reason or 'inconclusive'}; no ceiling{passed}."
    if ceiling.level is None:
        unit = ceiling.unit
        sentence = f"{prefix}{who} passed no level"
        if ceiling.high:
            sentence += f": even the lowest level tried, {ceiling.high:,} {unit}, failed"
        # "no level passed" only repeats the sentence; any other reason adds to it.
        reason = "; ".join(
            part for part in ceiling.stop_reason.split("; ") if part and part != "no level passed"
        )
        return f"{sentence} ({reason})." if reason else f"{sentence}."
    if ceiling.every_level_passed or (ceiling.high is None and not ceiling.complete):
        # No failing level above the pass: a lower bound, and no failing step to name a
        # resource from (every level passed, or the run stopped before one failed).
        why = "; ".join(
            part for part in (ceiling.stop_reason or "stopped early", ceiling.basis) if part
        )
        return (
            f"{prefix}{who} sustains at least {ceiling.level:,} {units} ({why}): no level "
            "failed above it, so nothing shows where it stops or what limits it."
        )
    verb = "sustains" if ceiling.complete else "sustains at least"
    sentence = f"{prefix}{who} {verb} {ceiling.level:,} {units}"
    if ceiling.basis:
        sentence += f" ({ceiling.basis})"
    experiment = (
        [phrase(ceiling.confirmation, units)]
        if ceiling.confirmation is not None and ceiling.limited_by is not LimitedBy.UNKNOWN
        else []
    )
    if ceiling.limited_by in (LimitedBy.MEMORY, LimitedBy.CPU):
        sentence += f"; {ceiling.limited_by.value} limited it"
        reasons = [part for part in (ceiling.headroom.reason, *experiment) if part]
        if reasons:
            sentence += f" ({'; '.join(reasons)})"
    elif ceiling.limited_by is LimitedBy.NEITHER:
        reasons = ["latency-bound", *experiment]
        sentence += f"; neither CPU nor memory limited it ({'; '.join(reasons)})"
    else:
        sentence += "; what limited it is unknown (no server metrics)"
    headroom = _headroom(ceiling)
    if headroom:
        sentence += f", {headroom}"
    if not ceiling.complete:
        high = f"{ceiling.high:,}" if ceiling.high else "an untested level"
        sentence += f" (range only, up to {high}: {ceiling.stop_reason or 'stopped early'})"
    return sentence + "."
