"""What one unit of load costs the target: a conclusion drawn from the passing steps
(`plimsoll.decide.unit_costs`), kept in the report and read by the sizing plan and the
comparisons."""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel


class UnitCost(PlimsollModel):
    """What one unit of load costs the target, from the passing steps' slope."""

    variant: str = "default"
    name: str = Field(description="e.g. 'memory per user', 'CPU per request'.")
    value: float
    unit: str = Field(description="e.g. 'bytes', 'core-seconds'.")
    basis: str = Field("", description="How it was computed, in words.")
