"""The steps table `plimsoll run` ends with, fitted to the terminal's width.

The full table (18 columns, `plimsoll.report.table`) stays in report.md; the terminal
gets the columns that say what happened, in this priority: level and verdict, always
and whole; the variant, when the run has several (a row means nothing without it);
the figures the bar judged (each latency bound's quantile of its metric and operation);
CPU; memory; errors; the achieved rate; the trial's kind; the step's number. When the
width cannot hold them all, the columns from the first that does not fit on are left
out, never the verdict, and a cell is never cut: a column fits whole or is left out.
The line under the table says which were left out and where they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.report import RunReport
from plimsoll.api.step import StepRecord, StepResult
from plimsoll.decide.judged_latency import judged_ms, label
from plimsoll.report.sentence import format_bytes

_GAP = "  "


@dataclass(frozen=True, eq=False)  # compared by identity: two columns may hold alike cells
class Column:
    heading: str
    cells: list[str]
    right: bool = True  # figures align right; words left
    place: int = 50  # where it is shown, left to right (the priority is the list's order)

    @property
    def width(self) -> int:
        return max(len(self.heading), *(len(cell) for cell in self.cells))


def _num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def columns(report: RunReport) -> list[Column]:
    """Every candidate column, in the order they are kept (the first two always)."""
    pairs: Sequence[tuple[StepResult, StepRecord]] = report.step_pairs()
    records = [record for _, record in pairs]
    chosen = [
        Column("level", [f"{r.level:,}" for r in records], place=20),
        Column("verdict", [r.verdict.value for r in records], right=False, place=30),
    ]
    if len({r.variant for r in records}) > 1:
        chosen.append(Column("variant", [r.variant for r in records], right=False, place=10))
    for bound in report.spec.pass_when.latency:
        values = [judged_ms(result.client, bound) for result, _ in pairs]
        chosen.append(Column(label(bound), [_num(v) for v in values]))
    if not report.spec.pass_when.latency:  # no latency bound: p99 still says how it went
        chosen.append(Column("p99 ms", [_num(r.p99_ms) for r in records]))
    chosen += [
        Column("CPU", [_num(r.cpu_cores, 2) for r in records]),
        Column(
            "memory",
            ["—" if r.memory_bytes is None else format_bytes(r.memory_bytes) for r in records],
        ),
        Column(
            "errors",
            ["—" if r.error_rate is None else f"{r.error_rate:.2%}" for r in records],
        ),
        Column("achieved/s", [_num(r.achieved_rate) for r in records]),
        Column("kind", [_kind(r) for r in records], right=False, place=60),
        Column("#", [str(r.index) for r in records], place=0),
    ]
    return chosen


def _kind(record: StepRecord) -> str:
    return record.kind.value + (f" #{record.attempt}" if record.attempt > 1 else "")


def fit(candidates: Sequence[Column], width: int) -> list[Column]:
    """The columns kept at `width`: the first two always, then each in turn until one does
    not fit (a narrow column further down does not jump the queue)."""
    kept = list(candidates[:2])
    used = sum(c.width for c in kept) + len(_GAP) * (len(kept) - 1)
    for column in candidates[2:]:
        if used + len(_GAP) + column.width > width:
            break
        kept.append(column)
        used += len(_GAP) + column.width
    return kept


def _line(cells: Sequence[str], kept: Sequence[Column]) -> str:
    parts = [
        cell.rjust(c.width) if c.right else cell.ljust(c.width)
        for cell, c in zip(cells, kept, strict=True)
    ]
    return _GAP.join(parts).rstrip()


def compact_table(report: RunReport, width: int, *, note: bool = True) -> list[str]:
    """The table's lines, none longer than `width` unless level and verdict alone are;
    with `note`, a last line naming the columns left out."""
    if not report.steps:
        return []
    candidates = columns(report)
    kept = fit(candidates, width)
    order = sorted(kept, key=lambda c: c.place)  # stable: the figures keep their order
    lines = [_line([c.heading for c in order], order)]
    for i in range(len(report.steps)):
        lines.append(_line([c.cells[i] for c in order], order))
    left_out = [c.heading for c in candidates if all(c is not k for k in kept)]
    if left_out and note:
        said = f"(left out at {width} columns: {', '.join(left_out)}; all are in report.md)"
        lines.append(said if len(said) <= width else "(more columns in report.md)")
    return lines
