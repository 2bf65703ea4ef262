"""What a run observed, as the runner keeps it while it runs: the spec, where each piece
ran, every judged step and its record, each variant's ceiling as its search left it, the
memory per held stream, the shapes the guided search chose, and how the run ended.

The runner (`plimsoll.run`) writes into nothing else. Conclusions are drawn from it by
pure functions (the per-unit costs, the comparison, the shapes' table, the sizing plan,
the proof, the sentences) and the report is assembled from both once
(`plimsoll.report.assemble`): a decision typed on `RunRecord` cannot read a conclusion
another one drew, so none depends on the order they were drawn in.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, field_serializer, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.host import HostDescription
from plimsoll.api.shapes import ShapeTable
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepRecord, StepResult
from plimsoll.api.streams import StreamMemory
from plimsoll.api.urls import redact_strings


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"  # every variant found its ceiling
    FAILED = "failed"  # the test could not complete; `message` says why


class RunRecord(PlimsollModel):
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
    ceilings: list[Ceiling] = Field(default_factory=list, description="One per variant.")
    steps: list[StepResult] = Field(default_factory=list)
    records: list[StepRecord] = Field(
        default_factory=list,
        description="Each step's compact figures, in the order of `steps` (empty in a "
        "report.json from before they were kept: `plimsoll.report.files.read_report` "
        "derives them then).",
    )
    stream_memory: list[StreamMemory] = Field(
        default_factory=list, description="Memory per held stream, per variant (streams probe)."
    )
    shapes: ShapeTable | None = Field(
        None, description="The pod shapes' cost table and the cheapest (spec.shapes)."
    )

    @model_validator(mode="after")
    def _records_match_steps(self) -> RunRecord:
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
