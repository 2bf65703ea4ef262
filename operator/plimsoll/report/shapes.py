"""The shapes in words and tables: the headline naming the cheapest shape, and the cost table.

"2 CPU / 1Gi is the cheapest shape: $0.41 per 1,000 requests/s per hour, 38% less than
1 CPU / 512Mi (memory-bound)." The figures come from `plimsoll.decide.shape_costs`;
this module only words and lays them out. Called by the runner at the end of a run
(the headline) and by the Markdown report (the table).
"""

from __future__ import annotations

from plimsoll.api.level_unit import unit_words
from plimsoll.api.shapes import ShapeResult, ShapeTable


def _money(currency: str, value: float) -> str:
    return f"{currency}{value:,.2f}" if value >= 10 else f"{currency}{value:.3g}"


def headline(table: ShapeTable, currency: str, baseline: str) -> str:
    """One sentence: the cheapest shape, its price per 1,000 units, and against the
    baseline shape (the first measured) how much less it costs and what limited that."""
    rows = {r.name: r for r in table.rows}
    best = rows.get(table.cheapest or "")
    if best is None or best.cost_per_thousand is None:
        return "No shape passed a level: there is no cheapest shape."
    per = unit_words(best.unit, short=True)
    price = f"{_money(currency, best.cost_per_thousand)} per 1,000 {per} per hour"
    if len(rows) == 1:
        return f"{best.label}: {price} ({best.limited_by.value}-bound; the only shape measured)."
    base = rows.get(baseline)
    text = f"{best.label} is the cheapest shape: {price}"
    if base is not None and base is not best and base.cost_per_thousand:
        saved = 1 - best.cost_per_thousand / base.cost_per_thousand
        text += f", {saved:.0%} less than {base.label} ({base.limited_by.value}-bound)"
    elif base is best and len(rows) > 1:
        text += f", the starting shape, {best.limited_by.value}-bound"
    text += "."
    if table.latency_bound:
        text += f" The search stopped: {table.stop_reason}."
    return text


def _cell(value: float | int | None, text: str) -> str:
    return "—" if value is None else text


def _prediction(row: ShapeResult) -> str:
    if row.predicted is None:
        return "—"
    if not row.ceiling:
        return f"{row.predicted:,}"
    return f"{row.predicted:,} ({row.ceiling / row.predicted - 1:+.0%} measured)"


SHAPE_COLUMNS = [
    "shape",
    "ceiling",
    "limited by",
    "headroom",
    "predicted",
    "cost/hour",
    "per 1,000 units/hour",
    "replicas",
    "monthly",
]


def shapes_rows(table: ShapeTable, currency: str) -> list[list[str]]:
    """One row of cells per shape, in `SHAPE_COLUMNS` order (report.md and report.html)."""
    rows = []
    for row in table.rows:
        ceiling = "none" if row.ceiling is None else f"{row.ceiling:,} {row.unit}"
        if not row.complete:
            ceiling += " (stopped early)"
        rows.append(
            [
                row.label,
                ceiling,
                row.limited_by.value,
                row.headroom or "—",
                _prediction(row),
                _money(currency, row.cost_per_hour),
                _cell(row.cost_per_thousand, _money(currency, row.cost_per_thousand or 0.0)),
                _cell(row.replicas, f"{row.replicas}"),
                _cell(row.monthly_cost, _money(currency, row.monthly_cost or 0.0)),
            ]
        )
    return rows


def shapes_markdown(table: ShapeTable, currency: str) -> str:
    """The cost table, one row per shape, the cheapest in bold, and why the search stopped."""
    lines = [f"**{table.headline}**", "", "| " + " | ".join(SHAPE_COLUMNS) + " |"]
    lines.append("|" + " --- |" * len(SHAPE_COLUMNS))
    for row, cells in zip(table.rows, shapes_rows(table, currency), strict=True):
        name = f"**{cells[0]}**" if row.cheapest else cells[0]
        lines.append("| " + " | ".join([name, *cells[1:]]) + " |")
    if table.stop_reason:
        lines += ["", f"The guided search stopped: {table.stop_reason}."]
    return "\n".join(lines) + "\n"
