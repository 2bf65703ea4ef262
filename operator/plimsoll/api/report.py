"""The run report: `report.json`, the machine-readable result of one capacity test.

Written by the runner (`plimsoll.run.runner.run_test` returns it; `plimsoll run`
writes it after every step, so a run that stops early still leaves what it
measured), read back by `plimsoll report FILE` to render Markdown and charts,
and by the operator to fill the resource's status. It keeps every step in full
(histograms included), which the status cannot hold, and beside each its
`StepRecord`, derived once by the runner: the table, the charts and the
comparisons read those figures instead of decoding the histograms again.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, field_serializer, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.comparison import Comparison
from plimsoll.api.gate import Changepoint
from plimsoll.api.host import HostDescription
from plimsoll.api.proof import Proof
from plimsoll.api.shapes import ShapeTable
from plimsoll.api.sizing import SizingPlan
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepRecord, StepResult
from plimsoll.api.streams import StreamMemory
from plimsoll.api.urls import redact_strings


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"  # every variant found its ceiling
    FAILED = "failed"  # the test could not complete; `message` says why


class UnitCost(PlimsollModel):
    """What one unit of load costs the target, from the passing steps' slope."""

    variant: str = "default"
    name: str = Field(description="e.g. 'memory per user', 'CPU per request'.")
    value: float
    unit: str = Field(description="e.g. 'bytes', 'core-seconds'.")
    basis: str = Field("", description="How it was computed, in words.")


class RunReport(PlimsollModel):
    test_name: str
    spec: CapacityTestSpec

    @field_serializer("spec", mode="wrap")
    def _without_credentials(self, spec: CapacityTestSpec, handler: Any) -> Any:
        # target.url and metrics.prometheusUrl may carry user:password@: the report
        # (a ConfigMap, files) is read by far more people than the secret was meant for.
        return redact_strings(handler(spec))

    started_at: datetime
    ended_at: datetime | None = None
    platform: str = Field(description="local or kubernetes.")
    host: HostDescription | None = Field(
        None, description="The machine measured on, where the platform can see it (local)."
    )
    pinned: bool | None = Field(None, description="False when the target ran without limits.")
    warnings: list[str] = Field(default_factory=list)
    placement: list[str] = Field(default_factory=list, description="Who ran where.")
    outcome: Outcome = Outcome.FAILED
    message: str = ""
    ceiling: Ceiling | None = Field(
        None, description="The baseline variant's ceiling (the first, or spec.baseline)."
    )
    ceilings: list[Ceiling] = Field(default_factory=list, description="One per variant.")
    steps: list[StepResult] = Field(default_factory=list)
    records: list[StepRecord] = Field(
        default_factory=list,
        description="Each step's compact figures, in the order of `steps` (empty in a "
        "report.json from before they were kept: `plimsoll.report.files.read_report` "
        "derives them then).",
    )
    unit_costs: list[UnitCost] = Field(default_factory=list)
    stream_memory: list[StreamMemory] = Field(
        default_factory=list, description="Memory per held stream, per variant (streams probe)."
    )
    summary: list[str] = Field(default_factory=list, description="One sentence per variant.")
    sizing: SizingPlan | None = Field(None, description="The plan spec.sizing asked for.")
    proof: Proof | None = Field(
        None, description="What the proof run (search.strategy: prove) showed: did it hold?"
    )
    comparison: Comparison | None = Field(
        None, description="The variants side by side, when the run had more than one."
    )
    shapes: ShapeTable | None = Field(
        None, description="The pod shapes' cost table and the cheapest (spec.shapes)."
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

    @model_validator(mode="after")
    def _records_match_steps(self) -> RunReport:
        # A record that belongs to another step would put one step's figures in another's row.
        if self.records and [r.index for r in self.records] != [s.index for s in self.steps]:
            raise ValueError("records must list the same steps as steps, in the same order")
        return self

    def add_step(self, result: StepResult, record: StepRecord) -> None:
        """Keep one judged step and its record side by side."""
        self.steps.append(result)
        self.records.append(record)

    def step_pairs(self) -> list[tuple[StepResult, StepRecord]]:
        """Each step with its record, for the readers that need both (the step table)."""
        return list(zip(self.steps, self.records, strict=True))
