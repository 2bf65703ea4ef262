"""The outcome of a proof run (`search.strategy: prove`): did the planned deployment hold?

`plimsoll.decide.proof` builds it from the one long trial's step: the level, the
replicas and zones that ran it, what each fault did (the worst window's p99 against
the bar, the requests that failed, the time to recover) and the requests per second
each remaining replica carried after the loss. The runner puts it in the report
(`RunReport.proof`), the operator in the status (`status.proof`, the `Proved`
condition), and its sentence is the run's summary everywhere.
"""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel


class ReplicaLoad(PlimsollModel):
    """What one replica left after the fault carried."""

    replica: str = Field(description="The replica's name, e.g. target-1.")
    zone: str | None = Field(None, description="Its zone, when the target has zones.")
    rate: float = Field(description="Requests per second sent to it from the fault on.")


class Proof(PlimsollModel):
    held: bool = Field(description="The deployment held the bar at the level, faults included.")
    level: int = Field(description="The level it ran at.")
    unit: str = Field(description="The unit of the level.")
    replicas: int = Field(description="Replicas of the target that ran it.")
    zones: list[str] = Field(default_factory=list, description="The zones they were spread over.")
    fault: str = Field("", description="What was taken away and when; empty without faults.")
    p99_ms: float | None = Field(
        None,
        description="The worst p99: of the window from the fault to the recovery when a "
        "fault fired, else of the whole trial.",
    )
    bar_ms: float | None = Field(None, description="The bar's p99 bound, when it has one.")
    failed_requests: int = Field(0, description="Requests that failed in the whole trial.")
    failed_fraction: float = Field(0.0, description="Their share of every request.")
    recovery_s: float | None = Field(
        None, description="Seconds from the fault until p99 was back within the bar for good."
    )
    remaining: list[ReplicaLoad] = Field(
        default_factory=list,
        description="The requests per second each replica left after the fault carried.",
    )
    sentence: str = Field(description="The outcome in one plain sentence.")
    reasons: list[str] = Field(default_factory=list, description="Why it did not hold, if not.")
