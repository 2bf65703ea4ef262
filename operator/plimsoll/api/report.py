"""The run report: `report.json`, the machine-readable result of one capacity test: the
run's record (`run_record.RunRecord`) with the conclusions drawn from it.

Written by the runner (`plimsoll.run.runner.run_test` returns it; `plimsoll run`
writes it after every step, so a run that stops early still leaves what it
measured), read back by `plimsoll report FILE` to render Markdown and charts,
and by the operator to fill the resource's status. It keeps every step in full
(histograms included), which the status cannot hold, and beside each its
`StepRecord`, derived once by the runner: the table, the charts and the
comparisons read those figures instead of decoding the histograms again.
"""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.comparison import Comparison
from plimsoll.api.gate import Changepoint
from plimsoll.api.proof import Proof
from plimsoll.api.run_record import Outcome, RunRecord
from plimsoll.api.sizing import SizingPlan
from plimsoll.api.status import Ceiling
from plimsoll.api.unit_cost import UnitCost

__all__ = ["Outcome", "RunRecord", "RunReport", "UnitCost"]


class RunReport(RunRecord):
    """The run's record with the conclusions drawn from it (`plimsoll.report.assemble`)."""

    ceiling: Ceiling | None = Field(
        None, description="The baseline variant's ceiling (the first, or spec.baseline)."
    )
    unit_costs: list[UnitCost] = Field(default_factory=list)
    summary: list[str] = Field(default_factory=list, description="One sentence per variant.")
    sizing: SizingPlan | None = Field(None, description="The plan spec.sizing asked for.")
    proof: Proof | None = Field(
        None, description="What the proof run (search.strategy: prove) showed: did it hold?"
    )
    comparison: Comparison | None = Field(
        None, description="The variants side by side, when the run had more than one."
    )
    against_baseline: list[Comparison] = Field(
        default_factory=list,
        description="`plimsoll run --baseline OLD/report.json`: this run's ceilings beside the "
        "baseline run's, one comparison per variant they share.",
    )
    changepoints: list[Changepoint] = Field(
        default_factory=list,
        description="regression.method changepoint: the significant changes in each "
        "variant's history, this run included (the operator's; a local run has no history).",
    )
