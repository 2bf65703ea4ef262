"""The shapes chart: each measured shape's cost per 1,000 units of load per hour, as a bar.

Drawn beside the other charts (`plimsoll.report.charts`) when a run compares pod
shapes (`spec.shapes`), so the cheapest shape and what limited each one stand out at
a glance; the cheapest bar is the coloured one.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from plimsoll.api.shapes import ShapeTable


def shapes_figure(table: ShapeTable, currency: str) -> Figure:
    figure, axes = plt.subplots(figsize=(7, 4))
    rows = table.rows
    positions = list(range(len(rows)))
    heights = [row.cost_per_thousand or 0.0 for row in rows]
    colours = ["tab:green" if row.cheapest else "tab:gray" for row in rows]
    axes.bar(positions, heights, color=colours, alpha=0.7)
    for position, row in zip(positions, rows, strict=True):
        shown = "no ceiling" if row.cost_per_thousand is None else row.limited_by.value
        axes.annotate(shown, (position, heights[position]), ha="center", va="bottom")
    axes.set_xticks(positions, [row.label for row in rows], rotation=20, ha="right")
    unit = rows[0].unit if rows else ""
    axes.set_ylabel(f"{currency} per 1,000 {unit} per hour")
    axes.set_title("Cost per unit of load, by pod shape (label: what limited it)")
    figure.tight_layout()
    return figure
