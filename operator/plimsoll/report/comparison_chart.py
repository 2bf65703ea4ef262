"""The ceilings chart: each variant's ceiling as a bar, its noise band as a whisker.

Drawn beside the latency and resource charts (`plimsoll.report.charts`) when a
run compares variants, so the reader sees at a glance which bands touch (within
noise) and which stand apart. A band open upwards (nothing above the ceiling
failed) is drawn as an arrow.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from plimsoll.api.comparison import Comparison, Difference


def ceilings_figure(comparison: Comparison) -> Figure:
    figure, axes = plt.subplots(figsize=(7, 4))
    rows = comparison.variants
    positions = list(range(len(rows)))
    heights = [row.ceiling or 0 for row in rows]
    colours = [
        "tab:gray" if row.difference is Difference.BASELINE else f"C{index}"
        for index, row in enumerate(rows)
    ]
    axes.bar(positions, heights, color=colours, alpha=0.6)
    for position, row in zip(positions, rows, strict=True):
        if row.band is None:
            continue
        top = row.band.high if row.band.high is not None else max(heights) * 1.1
        axes.vlines(position, row.band.low, top, color="black", linewidth=2)
        if row.band.high is None:
            axes.annotate("↑ open", (position, top), ha="center", va="bottom", fontsize="small")
        delta = (
            "baseline"
            if row.difference is Difference.BASELINE
            else f"{row.delta_percent:+.0f}% {row.difference.value}"
            if row.delta_percent is not None
            else row.difference.value
        )
        axes.annotate(delta, (position, row.band.low), ha="center", va="top", fontsize="small")
    axes.set_xticks(positions, [row.name for row in rows])
    axes.set_ylabel(f"ceiling ({comparison.unit})")
    axes.set_title("Ceilings and their noise bands (bar: ceiling, line: band)")
    return figure
