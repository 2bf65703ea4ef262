"""The comparison in words and tables: the headline sentence and the Markdown report.md opens
with, which `plimsoll compare` prints too, and the same tables as blocks for report.html.

"postgres holds 12% fewer modeled users than embedded (outside noise)." The figures
come from `plimsoll.api.comparison.Comparison` (built by `plimsoll.decide.comparison`);
this module only words and lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.comparison import ComparedVariant, Comparison, Difference
from plimsoll.api.level_unit import unit_words
from plimsoll.api.report import UnitCost
from plimsoll.api.run_record import RunRecord
from plimsoll.decide.comparison import compare, contenders_of
from plimsoll.report.sentence import format_bytes, format_quantity


def _clause(row: ComparedVariant, base: str, units: str) -> str:
    delta = row.delta_percent
    if row.difference is Difference.UNKNOWN or delta is None:
        return f"{row.name} cannot be compared with {base} (one of them has no ceiling)"
    if row.difference is Difference.WITHIN_NOISE:
        return f"{row.name} holds as many {units} as {base} within noise ({delta:+.0f}%)"
    more = "more" if delta > 0 else "fewer"
    return f"{row.name} holds {abs(delta):.0f}% {more} {units} than {base} (outside noise)"


def headline(comparison: Comparison) -> str:
    """One sentence naming the outcome of every contender against the baseline."""
    units = unit_words(comparison.unit)
    clauses = [
        _clause(row, comparison.baseline, units)
        for row in comparison.variants
        if row.difference is not Difference.BASELINE
    ]
    if not clauses:
        return f"Only {comparison.baseline} was measured: nothing to compare."
    return "; ".join(clauses) + "."  # names keep their case: they are the user's


def compare_variants(report: RunRecord, costs: Sequence[UnitCost]) -> Comparison | None:
    """The comparison of a run's variants (with their per-unit `costs`) and its headline;
    None for a single ceiling."""
    if len(report.ceilings) < 2:
        return None
    baseline = report.spec.baseline_name
    names = [c.variant for c in report.ceilings]
    comparison = compare(contenders_of(report, costs), baseline if baseline in names else None)
    comparison.headline = headline(comparison)
    return comparison


def _num(value: float | None, digits: int = 1, suffix: str = "") -> str:
    return "—" if value is None else f"{value:,.{digits}f}{suffix}"


def _signed(percent: float | None) -> str:
    return "—" if percent is None else f"{percent:+.1f}%"


def _cost_delta(row: ComparedVariant, percent: float | None) -> str:
    return "baseline" if row.difference is Difference.BASELINE else _signed(percent)


def _ceiling(row: ComparedVariant, unit: str) -> str:
    shown = "none" if row.ceiling is None else f"{row.ceiling:,} {unit}"
    return shown if row.complete else f"{shown} (stopped early)"


def _band(row: ComparedVariant) -> str:
    if row.band is None:
        return "—"
    high = "open" if row.band.high is None else f"{row.band.high:,}"
    return f"{row.band.low:,} … {high}"


def _delta(row: ComparedVariant) -> str:
    if row.difference is Difference.BASELINE:
        return "baseline"
    return f"{_signed(row.delta_percent)} ({row.difference.value})"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return lines


@dataclass(frozen=True)
class Block:
    """One part of the comparison: a sentence before, a table, a sentence after (each
    optional), so report.md and report.html lay out the same figures."""

    header: list[str]
    rows: list[list[str]]
    before: str = ""
    after: str = ""


def comparison_blocks(comparison: Comparison) -> list[Block]:
    """The comparison's tables: ceilings and Δ, figures at the common level, per-unit costs."""
    unit = comparison.unit
    rows = []
    for row in comparison.variants:
        value = "" if row.value is None else f"{row.value:g} {row.value_unit}".rstrip()
        rows.append(
            [
                row.name + (f" ({value})" if value else ""),
                _ceiling(row, unit),
                f"{row.low if row.low is not None else '—'} … "
                f"{row.high if row.high is not None else '—'}",
                ", ".join(str(s) for s in row.spread) or "—",
                _band(row),
                row.limited_by.value,
                _delta(row),
            ]
        )
    header = ["variant", "ceiling", "range", "spread", "noise band", "limited by", "Δ vs baseline"]
    blocks = [Block(header, rows, after=f"Within noise: {comparison.rule}.")]
    if comparison.common_level is not None:
        figures = []
        for row in comparison.variants:
            at = row.at_common_level
            if at is None:
                continue
            memory = "—" if at.memory_bytes is None else format_bytes(at.memory_bytes)
            figures.append(
                [
                    row.name,
                    _num(at.p50_ms),
                    _num(at.p95_ms),
                    _num(at.p99_ms),
                    _num(at.cpu_cores, 3),
                    memory,
                ]
            )
        before = f"At {comparison.common_level:,} {unit}, the highest level every variant passed:"
        header = ["variant", "p50 ms", "p95 ms", "p99 ms", "CPU (cores)", "memory"]
        blocks.append(Block(header, figures, before=before))
    else:
        before = "No level passed in every variant: latency and resources are not compared."
        blocks.append(Block([], [], before=before))
    costs = [
        [row.name, c.name, format_quantity(c.value, c.unit), _cost_delta(row, c.delta_percent)]
        for row in comparison.variants
        for c in row.costs
    ]
    if costs:
        blocks.append(Block(["variant", "cost", "value", "Δ vs baseline"], costs))
    features = [
        [row.name, f.name, format_quantity(f.value, f.unit)]
        for row in comparison.variants
        for f in row.feature_costs
    ]
    if features:
        blocks.append(Block(["variant", "feature cost", "value"], features))
    return blocks


def comparison_markdown(comparison: Comparison) -> str:
    """The headline in bold, then each block of `comparison_blocks` as Markdown."""
    lines = [f"**{comparison.headline or headline(comparison)}**", ""]
    for block in comparison_blocks(comparison):
        if block.before:
            lines += [block.before, ""]
        if block.header:
            lines += [*_table(block.header, block.rows), ""]
        if block.after:
            lines += [block.after, ""]
    return "\n".join(lines)
