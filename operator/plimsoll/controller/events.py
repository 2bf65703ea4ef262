"""Kubernetes Events on a CapacityTest: phase changes, each judged step, the ceiling.

`kubectl describe capacitytest NAME` and `kubectl get events` show a run's story
as it happens, in the order it happened, which the status (the latest state
only) cannot. The status writer (`plimsoll.controller.status`) queues one event
per phase change, step and verdict and posts them after its status patch, so an
event never announces what the status does not show yet.

Events are posted through the operator's own `KubeClient` (core/v1 `events`,
the `watched` RBAC group), and are best effort: an API server that refuses one
is logged, never a reason to fail or slow a run. The texts are built here from
the models, as pure functions, so they are unit-tested without a cluster.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from plimsoll.api.resource import API_VERSION, KIND
from plimsoll.api.status import Ceiling, Phase
from plimsoll.api.step import LimitedBy, StepRecord, Verdict
from plimsoll.api.urls import redact_urls_in
from plimsoll.kube.client import NO_RETRIES, KubeClient, KubeError

log = logging.getLogger(__name__)

COMPONENT = "plimsoll-operator"
_MESSAGE_LIMIT = 1024  # the API server rejects event messages over 1 KiB


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@dataclass(frozen=True)
class Event:
    type: EventType
    reason: str  # CamelCase, as Kubernetes reasons are
    message: str


# The reason each phase is announced with; a failure is a Warning.
PHASE_REASONS: dict[Phase, str] = {
    Phase.PENDING: "RunCreated",
    Phase.QUEUED: "Queued",
    Phase.PROVISIONING: "Provisioning",
    Phase.RUNNING: "Running",
    Phase.SUCCEEDED: "Succeeded",
    Phase.FAILED: "Failed",
}
STEP_REASONS: dict[Verdict, str] = {
    Verdict.PASS: "StepPassed",
    Verdict.FAIL: "StepFailed",
    Verdict.INVALID: "StepInvalid",
    Verdict.NOISY: "StepNoisy",
    Verdict.MARGINAL: "StepMarginal",
}


LIMITS: dict[LimitedBy, str] = {
    LimitedBy.CPU: "limited by cpu",
    LimitedBy.MEMORY: "limited by memory",
    LimitedBy.NEITHER: "limited by neither cpu nor memory (latency-bound)",
    LimitedBy.UNKNOWN: "limiting resource unknown (no server metrics)",
}


def phase_event(phase: Phase, message: str) -> Event:
    kind = EventType.WARNING if phase is Phase.FAILED else EventType.NORMAL
    return Event(kind, PHASE_REASONS[phase], f"phase {phase.value}: {message}")


def _figures(record: StepRecord) -> list[str]:
    figures = []
    if record.achieved_rate is not None:
        figures.append(f"achieved {record.achieved_rate:.1f}/s")
    for name, value in (("p50", record.p50_ms), ("p99", record.p99_ms)):
        if value is not None:
            figures.append(f"{name} {value:.1f} ms")
    if record.error_rate is not None:
        figures.append(f"errors {record.error_rate:.2%}")
    if record.cpu_cores is not None:
        figures.append(f"cpu {record.cpu_cores:.2f} cores")
    if record.throttled_ratio is not None:
        figures.append(f"throttled {record.throttled_ratio:.0%}")
    if record.memory_bytes is not None:
        figures.append(f"memory {record.memory_bytes / 2**20:.0f} MiB")
    return figures


def step_event(record: StepRecord, unit: str) -> Event:
    """One judged step: its level, its verdict and the figures it was judged on."""
    variant = "" if record.variant == "default" else f"variant {record.variant}, "
    head = (
        f"{variant}step {record.index} ({record.kind.value}, attempt {record.attempt}): "
        f"level {record.level} {unit} {record.verdict.value}"
    )
    parts = [head, ", ".join(_figures(record))]
    if record.reasons:
        parts.append("; ".join(record.reasons))
    passed = record.verdict is Verdict.PASS or record.verdict is Verdict.FAIL
    kind = EventType.NORMAL if passed else EventType.WARNING
    return Event(kind, STEP_REASONS[record.verdict], " | ".join(p for p in parts if p))


def replaced_event(message: str) -> Event:
    """A dead generator or mock was started again: a Warning, since something killed it."""
    return Event(EventType.WARNING, "EquipmentReplaced", message)


def ceiling_event(ceiling: Ceiling) -> Event:
    variant = "" if ceiling.variant == "default" else f"variant {ceiling.variant}: "
    if ceiling.level is None:
        text = f"{variant}no level passed"
        return Event(EventType.WARNING, "NoCeiling", _with_reason(text, ceiling))
    if ceiling.every_level_passed:
        text = f"{variant}at least {ceiling.level} {ceiling.unit}: no level failed, no ceiling"
        return Event(EventType.NORMAL, "AtLeast", _with_reason(text, ceiling))
    text = f"{variant}ceiling {ceiling.level} {ceiling.unit}, {LIMITS[ceiling.limited_by]}"
    if not ceiling.complete:
        text += f" (range only: {ceiling.low}..{ceiling.high})"
    reason = "CeilingFound" if ceiling.complete else "RangeOnly"
    return Event(EventType.NORMAL, reason, _with_reason(text, ceiling))


def _with_reason(text: str, ceiling: Ceiling) -> str:
    return f"{text}; {ceiling.stop_reason}" if ceiling.stop_reason else text


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _instance() -> str:
    return os.environ.get("POD_NAME") or socket.gethostname()


def event_body(owner: dict[str, Any], event: Event) -> dict[str, Any]:
    """A core/v1 Event about `owner` (a CapacityTest), in the owner's namespace."""
    meta = owner["metadata"]
    now = _now()
    message = redact_urls_in(event.message)
    if len(message) > _MESSAGE_LIMIT:
        message = message[: _MESSAGE_LIMIT - 1] + "…"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            # kubectl's naming: the object's name and a unique suffix
            "name": f"{meta['name']}.{uuid.uuid4().hex[:16]}",
            "namespace": meta["namespace"],
        },
        "involvedObject": {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        },
        "type": event.type.value,
        "reason": event.reason,
        "message": message,
        "count": 1,
        "firstTimestamp": now[:19] + "Z",
        "lastTimestamp": now[:19] + "Z",
        "eventTime": now,
        "source": {"component": COMPONENT},
        "reportingComponent": f"plimsoll.dev/{COMPONENT}",
        "reportingInstance": _instance(),
        "action": "Run",
    }


class EventRecorder:
    """Posts events about one CapacityTest; what it could not post it logs."""

    def __init__(self, client: KubeClient, owner: dict[str, Any]) -> None:
        self.client = client
        self.owner = owner
        self.posted: list[Event] = []  # what this recorder has posted, in order

    async def post(self, event: Event) -> bool:
        try:
            # Best effort: never retried, so a refusing API server never slows the run.
            await self.client.create(event_body(self.owner, event), retry=NO_RETRIES)
        except KubeError as exc:
            log.warning("event %s not posted: %s", event.reason, exc.message)
            return False
        self.posted.append(event)
        return True
