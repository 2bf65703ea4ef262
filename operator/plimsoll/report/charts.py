"""Charts of a run: latency quantiles against the level, CPU and memory against the level,
and each full step's timeline (`plimsoll.report.timeline_chart`).

Drawn with matplotlib's Agg backend (no display needed), each as PNG and SVG,
with the pod's limits drawn as lines so the reader sees how close each step
came. Called by `plimsoll.report.files.write_report`; returns the file names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from plimsoll.api.report import RunReport
from plimsoll.api.step import StepRecord, Verdict
from plimsoll.report.comparison_chart import ceilings_figure
from plimsoll.report.shapes_chart import shapes_figure
from plimsoll.report.timeline_chart import chart_stem, drawn_steps, timeline_figure

_MARKERS = {
    Verdict.PASS: "o",
    Verdict.FAIL: "x",
    Verdict.INVALID: "s",
    Verdict.NOISY: "^",
    Verdict.MARGINAL: "d",
}


def _save(figure: Figure, out: Path, stem: str) -> list[str]:
    names = []
    for suffix in ("png", "svg"):
        name = f"{stem}.{suffix}"
        figure.savefig(out / name, dpi=110, bbox_inches="tight")
        names.append(name)
    plt.close(figure)
    return names


def draw_charts(report: RunReport, out: Path) -> list[str]:
    """latency, resources, (with variants) ceilings and (with shapes) shapes charts in
    `out`; the file names."""
    records = sorted(report.records, key=lambda r: r.level)
    if not records:
        return []
    names = _save(latency_figure(report, records), out, "latency")
    names += _save(resources_figure(report, records), out, "resources")
    if report.comparison is not None:
        names += _save(ceilings_figure(report.comparison), out, "ceilings")
    if report.shapes is not None and report.shapes.rows:
        names += _save(shapes_figure(report.shapes, report.spec.cost.currency), out, "shapes")
    for step in drawn_steps(report):
        names += _save(timeline_figure(report, step), out, chart_stem(step))
    return names


def _variants(records: Sequence[StepRecord]) -> list[str]:
    return sorted({r.variant for r in records})


def latency_figure(report: RunReport, records: Sequence[StepRecord]) -> Figure:
    """p50, p95 and p99 against the level, one line per variant, each step marked by its
    verdict, and the bar's latency bounds as dashed lines."""
    variants = _variants(records)
    figure, axes = plt.subplots(figsize=(7, 4))
    for variant in variants:
        mine = [r for r in records if r.variant == variant]
        for label, values in (
            ("p50", [r.p50_ms for r in mine]),
            ("p95", [r.p95_ms for r in mine]),
            ("p99", [r.p99_ms for r in mine]),
        ):
            points = [(r, v) for r, v in zip(mine, values, strict=True) if v is not None]
            if not points:
                continue
            (line,) = axes.plot(
                [r.level for r, _ in points],
                [v for _, v in points],
                linewidth=1,
                label=f"{label} {variant}" if len(variants) > 1 else label,
            )
            # Each step keeps its verdict's marker: a failing step's latency may be
            # low only because its calls failed fast, and the chart must not hide that.
            for record, value in points:
                axes.scatter(
                    record.level,
                    value,
                    marker=_MARKERS.get(record.verdict, "o"),
                    color=line.get_color(),
                    s=18,
                )
    for bound in report.spec.pass_when.latency:
        axes.axhline(
            bound.below * 1000,
            linestyle="--",
            color="red",
            linewidth=1,
            label=f"bar p{bound.quantile * 100:g} < {bound.below * 1000:g} ms",
        )
    axes.set_xlabel(f"level ({report.spec.unit})")
    axes.set_ylabel("latency (ms)")
    axes.set_title("Latency quantiles by level (o pass, x fail)")
    if axes.get_legend_handles_labels()[0]:  # steps without client results draw no line
        axes.legend(fontsize="small")
    return figure


def resources_figure(report: RunReport, records: Sequence[StepRecord]) -> Figure:
    """The target's mean CPU and peak memory against the level, one colour per variant,
    with the pod's limits as dashed lines when Plimsoll pinned it."""
    variants = _variants(records)
    unit = report.spec.unit
    figure, (cpu_axes, memory_axes) = plt.subplots(1, 2, figsize=(11, 4))
    # One colour per variant, so variants overlaid on the same axes stay apart.
    colours = {v: f"C{i}" for i, v in enumerate(variants)}
    labelled: set[str] = set()
    for record in records:
        marker = _MARKERS.get(record.verdict, "o")
        colour = colours[record.variant]
        first = len(variants) > 1 and record.variant not in labelled
        name = record.variant if first else None  # one legend entry per variant
        if name is not None:
            labelled.add(record.variant)
        if record.cpu_cores is not None:
            cpu_axes.scatter(
                record.level, record.cpu_cores, marker=marker, color=colour, label=name
            )
        if record.memory_bytes is not None:
            memory_axes.scatter(
                record.level, record.memory_bytes / 2**20, marker=marker, color=colour, label=name
            )
    shape = report.spec.target.resources
    if shape is not None and report.spec.target.url is None:
        cpu_axes.axhline(shape.cpu, color="red", linestyle="--", label=f"limit {shape.cpu:g} CPU")
        memory_axes.axhline(
            shape.memory / 2**20,
            color="red",
            linestyle="--",
            label=f"limit {shape.memory / 2**20:g} MiB",
        )
    if labelled or (shape is not None and report.spec.target.url is None):
        cpu_axes.legend(fontsize="small")
        memory_axes.legend(fontsize="small")
    cpu_axes.set_xlabel(f"level ({unit})")
    cpu_axes.set_ylabel("CPU (cores, mean)")
    cpu_axes.set_title("Target CPU by level (o pass, x fail)")
    memory_axes.set_xlabel(f"level ({unit})")
    memory_axes.set_ylabel("memory (MiB, peak working set)")
    memory_axes.set_title("Target memory by level")
    return figure
