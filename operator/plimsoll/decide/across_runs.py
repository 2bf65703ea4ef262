"""Runs compared across releases or days, and the regression gate over them.

`plimsoll compare A/report.json B/report.json` and `plimsoll run --baseline
OLD/report.json` both land here: each run is labelled (its folder, or
"baseline"/"this run"), and its variants are matched by name, so a run with
variants yields one comparison per variant, the first run as the baseline
unless another is named. `regressions` applies the regression rule of
`plimsoll.decide.difference` to every comparison: the gate a CI pipeline
fails on. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.comparison import ComparedVariant, Comparison, Difference
from plimsoll.api.run_record import RunRecord
from plimsoll.api.unit_cost import UnitCost
from plimsoll.decide.comparison import compare, contenders_of
from plimsoll.decide.difference import regressed


@dataclass(frozen=True)
class LabelledRun:
    label: str
    report: RunRecord
    costs: Sequence[UnitCost]  # its per-unit costs (`decide.unit_costs`, in its report)
    source: str = ""


def compare_runs(runs: Sequence[LabelledRun], baseline: str | None = None) -> list[Comparison]:
    """One comparison per variant name of the baseline run, across every run that has it."""
    if len(runs) < 2:
        raise ValueError("give at least two reports to compare")
    labels = [run.label for run in runs]
    if baseline is not None and baseline not in labels:
        raise ValueError(f"baseline {baseline!r} is none of the runs {labels}")
    base_label = baseline or labels[0]
    base_run = next(run for run in runs if run.label == base_label)
    comparisons = []
    for ceiling in base_run.report.ceilings:
        variant = ceiling.variant
        contenders = [
            contender
            for run in runs
            for contender in contenders_of(
                run.report, run.costs, prefix=run.label, source=run.source
            )
            if contender.ceiling.variant == variant
        ]
        base_name = base_label if variant == "default" else f"{base_label}:{variant}"
        comparisons.append(compare(contenders, base_name))
    if not comparisons:
        raise ValueError(f"the baseline run {base_label!r} holds no ceiling to compare against")
    return comparisons


def regressions(comparison: Comparison, threshold: float) -> list[ComparedVariant]:
    """The contenders whose ceiling dropped by more than `threshold` and outside noise."""
    base = next(v for v in comparison.variants if v.difference is Difference.BASELINE)
    return [
        row
        for row in comparison.variants
        if row is not base and regressed(base.ceiling, base.band, row.ceiling, row.band, threshold)
    ]
