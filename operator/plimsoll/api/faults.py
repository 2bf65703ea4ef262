"""Faults injected during a trial: `trial.faults`, e.g. `{at: 30s, kill: {replicas: 1}}`.

The runner (`plimsoll.run.faults`) fires each fault `at` seconds into the measured
window through the platform; the step then reports the windows before, during and
after the fault, each judged against the bar on its own (`plimsoll.decide.fault_windows`).
Built on the local platform: `kill` (SIGKILL of replicas), `remove` (SIGKILL of one
zone's replicas) and `restore` (start a removed zone's replicas again). Every fault on
Kubernetes says it is not built yet.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import TrialSeconds


class KillReplicas(PlimsollModel):
    replicas: int = Field(1, ge=1, le=63, description="How many replicas to kill (SIGKILL).")


class ZoneRef(PlimsollModel):
    zone: str = Field(min_length=1, max_length=63, description="A zone of target.zones.")


class Fault(PlimsollModel):
    """One fault: when, and exactly one of what."""

    at: TrialSeconds = Field(description="Seconds into the measured window, e.g. '30s'.")
    kill: KillReplicas | None = Field(
        None, description="Kill this many replicas of the target (the last ones started)."
    )
    remove: ZoneRef | None = Field(
        None, description="Take a zone away: kill every replica of the target in it."
    )
    restore: ZoneRef | None = Field(
        None, description="Bring a zone an earlier fault removed back: start its replicas again."
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Fault:
        kinds = [k for k in ("kill", "remove", "restore") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(
                "a fault needs exactly one of kill, remove or restore, e.g. "
                "{at: 30s, kill: {replicas: 1}}"
            )
        return self

    def describe(self) -> str:
        if self.kill is not None:
            n = self.kill.replicas
            return f"{n} replica{'s' if n != 1 else ''} killed at {self.at:g} s"
        if self.restore is not None:
            return f"zone {self.restore.zone} restored at {self.at:g} s"
        zone = self.remove.zone if self.remove is not None else "?"
        return f"zone {zone} lost at {self.at:g} s"


class FaultWindow(PlimsollModel):
    """Before, during or after a fault: its slices judged against the bar on their own."""

    name: str = Field(description="before, during or after.")
    start: float = Field(description="Seconds into the measured window.")
    end: float = Field(description="Seconds into the measured window.")
    p99_ms: float | None = Field(None, description="p99 of every call answered in the window.")
    requests: int = Field(0, description="Calls that ended in the window.")
    errors: int = Field(0, description="Calls that ended in the window as errors.")
    rate: float = Field(0.0, description="Calls sent per second in the window.")
    ok: bool = Field(description="The window held the bar.")
    reasons: list[str] = Field(default_factory=list, description="What it broke, if anything.")


class FaultOutcome(PlimsollModel):
    """What one fault did to a step (`plimsoll.decide.fault_windows`)."""

    fault: str = Field(description="What was done and when, e.g. '1 replica killed at 5 s'.")
    at: float = Field(description="When it fired, seconds into the measured window.")
    taken: list[str] = Field(default_factory=list, description="The pieces it took away.")
    windows: list[FaultWindow] = Field(default_factory=list)
    caused_errors: int = Field(
        0,
        description="Errors from the fault on until p99 was back within the bar: the calls "
        "in flight on, or routed to, the lost replicas.",
    )
    recovery_s: float | None = Field(
        None,
        description="Seconds from the fault until p99 was back within the bar for good; None "
        "when it never came back.",
    )
    held: bool = Field(description="Before and after the fault held the bar, and p99 recovered.")
