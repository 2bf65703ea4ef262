"""The limit confirmed by experiment: what the report and the status say of it.

After the search, the first failing level is run again with one resource doubled at a
time (`plimsoll.decide.confirmation` plans it and reads the outcome). These models
carry the plan's trials and the finding across the process boundary: into
report.json, the CapacityTest's status and the HTML report.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.step import LimitedBy, Verdict
from plimsoll.api.target import PodShape


class Finding(StrEnum):
    """What the experiment made of the resource the search named."""

    CONFIRMED = "confirmed"  # doubling the named resource passed; doubling the other did not
    CONTRADICTED = "contradicted"  # the other resource's doubling passed, the named one's not
    INFERRED = "inferred"  # not run, or its trials could not tell (both passed, one unjudged)


class Counterfactual(PlimsollModel):
    """One trial of the experiment: the failing level at a shape with one resource doubled."""

    doubled: LimitedBy = Field(description="The resource doubled: cpu or memory.")
    level: int = Field(description="The level run: the search's first failing level.")
    shape: PodShape = Field(description="The target's shape for this trial.")
    verdict: Verdict | None = Field(None, description="The trial's verdict; None until run.")
    reasons: list[str] = Field(
        default_factory=list, description="What the verdict rests on, as the step's reasons."
    )
    held_streams: int | None = Field(
        None,
        ge=0,
        description="The streams probe's streams open when this trial began, held as the "
        "search's trials held them (workload.streams.holdDuringSteps); None: none were held.",
    )


class Confirmation(PlimsollModel):
    """The experiment's outcome for one variant's ceiling."""

    finding: Finding = Field(
        description="confirmed, contradicted (the ceiling then names what was found) or inferred."
    )
    named: LimitedBy = Field(description="The resource the search named before the experiment.")
    found: LimitedBy = Field(
        description="The resource the experiment points to (the named one when it did not run)."
    )
    trials: list[Counterfactual] = Field(
        default_factory=list, description="The trials run, in order: the named resource first."
    )
    reason: str = Field(
        "", description="Why it was not run, or why its trials could not tell, when so."
    )
