"""What the operator should do with a CapacityTest, decided from its state alone.

Pure policy, called by the operator's supervisor (`plimsoll.controller.supervisor`,
the body of each resource's kopf daemon) each time it looks at a resource: given
the spec's validity, the generation and the rerun annotation the user asked for,
and the status the operator wrote before, it answers start, resume, mark invalid,
or nothing. No kopf, no clock, no I/O, so every case (a restart mid-run, a spec
change, a rerun token, a finished run) is a plain unit test. It also maps phases
to the conditions they imply.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from plimsoll.api.status import (
    TERMINAL_PHASES,
    CapacityTestStatus,
    ConditionStatus,
    ConditionType,
    Phase,
    Reason,
)

RERUN_ANNOTATION = "plimsoll.dev/rerun"


class Action(StrEnum):
    IDLE = "idle"  # finished (or invalid) for this generation and token: nothing to do
    START = "start"  # a new run: first sight, a new generation, or a new rerun token
    RESUME = "resume"  # a run of this generation was under way: go on from status.steps
    INVALID = "invalid"  # the spec fails deeper validation: say so in the status, once


@dataclass(frozen=True)
class Desired:
    """What the user currently asks for: this generation, with this rerun token, for this
    slot of its schedule (None when it has none, or none has come due)."""

    generation: int | None
    rerun_token: str | None
    scheduled_slot: str | None = None
    trigger_image: str | None = None  # the watched Deployment's image (trigger.onImageChange)

    @classmethod
    def of(
        cls,
        meta: dict[str, Any],
        scheduled_slot: str | None = None,
        trigger_image: str | None = None,
    ) -> Desired:
        annotations = meta.get("annotations") or {}
        return cls(
            meta.get("generation"),
            annotations.get(RERUN_ANNOTATION),
            scheduled_slot,
            trigger_image,
        )


def serves(status: CapacityTestStatus | None, desired: Desired) -> bool:
    """Does the status describe a run (or verdict) for exactly what is desired?"""
    return (
        status is not None
        and status.observed_generation == desired.generation
        and status.rerun_token == desired.rerun_token
        and status.scheduled_slot == desired.scheduled_slot
        and status.trigger_image == desired.trigger_image
        and (status.run_id is not None or status.phase is Phase.FAILED)
    )


def choose_action(status: CapacityTestStatus | None, desired: Desired, spec_valid: bool) -> Action:
    if not spec_valid:
        already = serves(status, desired) and status is not None and status.phase is Phase.FAILED
        return Action.IDLE if already else Action.INVALID
    if not serves(status, desired) or status is None or status.run_id is None:
        return Action.START
    if status.phase in TERMINAL_PHASES:
        return Action.IDLE
    return Action.RESUME


def restart_reason(status: CapacityTestStatus | None, desired: Desired) -> Reason:
    """Why a new run replaces an earlier one (for the condition and the event)."""
    if status is not None and status.rerun_token != desired.rerun_token:
        return Reason.RERUN_REQUESTED
    same_spec = status is not None and status.observed_generation == desired.generation
    if same_spec and status is not None and status.scheduled_slot != desired.scheduled_slot:
        return Reason.SCHEDULED
    if same_spec and status is not None and status.trigger_image != desired.trigger_image:
        return Reason.IMAGE_CHANGED
    return Reason.SPEC_CHANGED


@dataclass(frozen=True)
class ConditionChange:
    type: ConditionType
    status: ConditionStatus
    reason: Reason


def conditions_for(phase: Phase, *, range_only: bool = False) -> list[ConditionChange]:
    """The conditions a phase implies (Kubernetes conventions: one Ready, plus details)."""
    true, false, unknown = ConditionStatus.TRUE, ConditionStatus.FALSE, ConditionStatus.UNKNOWN
    c, r = ConditionType, Reason
    table: dict[Phase, list[ConditionChange]] = {
        Phase.PENDING: [ConditionChange(c.READY, unknown, r.PROVISIONING)],
        Phase.QUEUED: [
            ConditionChange(c.READY, unknown, r.QUEUED),
            ConditionChange(c.PROGRESSING, false, r.QUEUED),
        ],
        Phase.PROVISIONING: [
            ConditionChange(c.SPEC_VALID, true, r.VALID),
            ConditionChange(c.PROVISIONED, false, r.PROVISIONING),
            ConditionChange(c.PROGRESSING, true, r.PROVISIONING),
        ],
        Phase.RUNNING: [
            ConditionChange(c.PROVISIONED, true, r.PROVISIONED),
            ConditionChange(c.PROGRESSING, true, r.TRIAL_RUNNING),
        ],
        Phase.SUCCEEDED: [
            ConditionChange(c.READY, true, r.CEILING_FOUND),
            ConditionChange(c.PROGRESSING, false, r.CEILING_FOUND),
        ],
        Phase.FAILED: [
            ConditionChange(c.READY, false, r.RANGE_ONLY if range_only else r.RUN_FAILED),
            ConditionChange(c.PROGRESSING, false, r.RANGE_ONLY if range_only else r.RUN_FAILED),
        ],
    }
    return table[phase]


def short_run_id(uid: str, generation: int | None, token: str | None, nonce: str) -> str:
    """A run id that is new for every run of a resource (the nonce) and readable."""
    digest = hashlib.sha256(f"{uid}/{generation}/{token}/{nonce}".encode()).hexdigest()
    return digest[:8]
