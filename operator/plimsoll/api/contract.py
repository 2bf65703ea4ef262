"""Capacity as a contract on the Deployment it was proven for (`spec.contract`).

Opt-in: after a run that found a ceiling, the operator writes what it proved onto the
Deployment the target copies (`target.fromDeployment`), as two annotations any tool
can read (`kubectl get deploy -o yaml`, Argo CD's diff, a policy engine):

- `plimsoll.dev/capacity-state`: `proven` while the Deployment runs the image the
  ceiling was proven for, `unproven` once it runs another and no run has passed since;
- `plimsoll.dev/capacity`: the `CapacityContract` below as JSON: the image it speaks
  of now and the last proof (its image, ceiling, shape, limit and run).

The operator's `/metrics` carry the same state (`plimsoll_contract_proven`), which the
chart's Grafana dashboard shows per Deployment.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.confirmation import Finding
from plimsoll.api.step import LimitedBy

STATE_ANNOTATION = "plimsoll.dev/capacity-state"
CONTRACT_ANNOTATION = "plimsoll.dev/capacity"


class Contract(PlimsollModel):
    annotate: bool = Field(
        False,
        description="Write the proven ceiling, its shape, its limit and the run onto the "
        "Deployment target.fromDeployment names (annotations plimsoll.dev/capacity and "
        "plimsoll.dev/capacity-state), and mark it unproven when its image changes and no "
        "run has passed since.",
    )


class ContractState(StrEnum):
    PROVEN = "proven"  # the Deployment runs the image the ceiling was proven for
    UNPROVEN = "unproven"  # it runs another image, and no run has passed for it yet


class ProvenCapacity(PlimsollModel):
    """What the last run that found a ceiling proved, and for which image."""

    image: str = Field(description="The Deployment's image the run copied and measured.")
    ceiling: int = Field(description="The highest passing level.")
    unit: str = Field(description="The level's unit: rps or users.")
    cpu: str = Field(description="The pod shape's CPU, requests == limits: '500m'.")
    memory: str = Field(description="The pod shape's memory: '512Mi'.")
    limited_by: LimitedBy = Field(description="What limited it: cpu, memory or neither.")
    finding: Finding | None = Field(
        None, description="Whether the experiment confirmed the limit (attribution.confirm)."
    )
    run_id: str = Field(description="The run that proved it (status.runId).")
    capacity_test: str = Field(description="The CapacityTest that ran it: namespace/name.")
    at: datetime = Field(description="When the run ended.")


class CapacityContract(PlimsollModel):
    """The value of the `plimsoll.dev/capacity` annotation."""

    state: ContractState
    image: str | None = Field(
        None, description="The image the Deployment runs now (when the operator last read it)."
    )
    proven: ProvenCapacity | None = Field(
        None, description="The last run that found a ceiling, for whichever image."
    )
