"""Inputs and output of sizing: from a measured ceiling to a deployment plan.

`plimsoll size` reads these from flags (and the per-pod ceiling from a report);
the plan goes to the terminal and, as JSON, wherever the user keeps plans.
"""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.units import Bytes, Fraction, Seconds


class SizingInput(PlimsollModel):
    per_pod: float = Field(gt=0, description="Measured ceiling of one pod, in the test's unit.")
    unit: str = "rps"
    peak: float = Field(gt=0, description="Expected peak load, in the same unit.")
    growth: float = Field(1.0, ge=1, description="Plan for peak × growth (2 = doubling).")
    utilisation: Fraction = Field(0.6, description="Share of the ceiling a pod may run at.")
    zones: int = Field(1, ge=1, le=10)
    survive_zone_loss: bool = True
    upstream_latency: Seconds | None = Field(
        None, description="Upstream p99: with a rate, Little's law gives calls in flight."
    )
    burst: float = Field(2.0, ge=1, description="In-flight headroom for bursts.")
    streams: int = Field(0, ge=0, description="Concurrent streams to hold across all pods.")
    memory_per_stream: Bytes | None = None
    memory_per_in_flight: Bytes | None = None


class SizingLine(PlimsollModel):
    item: str
    derivation: str
    result: str


class SizingPlan(PlimsollModel):
    pods: int
    pods_per_zone: int
    pods_after_zone_loss: int
    load_per_pod_after_loss: float
    in_flight_per_pod: int | None = None
    streams_per_pod: int | None = None
    memory_per_pod_bytes: int | None = None
    lines: list[SizingLine]
