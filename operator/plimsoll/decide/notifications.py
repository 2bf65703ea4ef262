"""What a run's end changed, and the webhook bodies that say so (`spec.notify`).

Pure: the status sink snapshots the verdicts before a run's end is written and after,
and `notices` says which of Succeeded, Failed, Regressed and Proved changed; the
bodies are a CloudEvents 1.0 event (structured mode, JSON) or Slack's `{"text": ...}`.
The id and time of an event are passed in, so the same change gives the same body.
`plimsoll.controller.notify` reads the URL and sends them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from plimsoll.api.notify import NotifyOn
from plimsoll.api.status import CapacityTestStatus, ConditionStatus, ConditionType, Phase

CLOUDEVENTS_CONTENT_TYPE = "application/cloudevents+json"
EVENT_TYPE_PREFIX = "dev.plimsoll.capacitytest."


@dataclass(frozen=True)
class Verdicts:
    """The part of a status a notification is about."""

    phase: Phase | None = None
    regressed: bool = False
    regression: str = ""
    proved: ConditionStatus | None = None
    proof: str = ""


def verdicts_of(status: CapacityTestStatus) -> Verdicts:
    conditions = {c.type: c for c in status.conditions}
    regressed = conditions.get(ConditionType.REGRESSED)
    proved = conditions.get(ConditionType.PROVED)
    return Verdicts(
        phase=status.phase,
        regressed=regressed is not None and regressed.status is ConditionStatus.TRUE,
        regression=regressed.message if regressed is not None else "",
        proved=proved.status if proved is not None else None,
        proof=proved.message if proved is not None else "",
    )


@dataclass(frozen=True)
class Notice:
    kind: NotifyOn
    namespace: str
    name: str
    sentence: str  # for a person: the chat line, the event's summary
    data: dict[str, Any] = field(default_factory=dict)  # the figures, for a machine


def notices(before: Verdicts, after: CapacityTestStatus, namespace: str, name: str) -> list[Notice]:
    """The changes from `before` to `after`: the phase a run ended in (Succeeded or
    Failed), Regressed turning True, Proved taking a new value."""
    now = verdicts_of(after)
    ceiling = after.ceiling
    data: dict[str, Any] = {
        "namespace": namespace,
        "name": name,
        "runId": after.run_id,
        "phase": now.phase.value if now.phase else None,
        "message": after.message,
        "ceiling": ceiling.level if ceiling is not None else None,
        "unit": ceiling.unit if ceiling is not None else None,
        "change": after.change,
    }
    who = f"CapacityTest {namespace}/{name}"
    found: list[Notice] = []
    if now.phase != before.phase and now.phase in (Phase.SUCCEEDED, Phase.FAILED):
        kind = NotifyOn.SUCCEEDED if now.phase is Phase.SUCCEEDED else NotifyOn.FAILED
        what = "succeeded" if kind is NotifyOn.SUCCEEDED else "failed"
        sentence = f"{who} {what}: {after.message}" if after.message else f"{who} {what}"
        found.append(Notice(kind, namespace, name, sentence, data))
    if now.regressed and not before.regressed:
        found.append(
            Notice(
                NotifyOn.REGRESSED,
                namespace,
                name,
                f"{who} regressed: {now.regression}",
                {**data, "regression": now.regression},
            )
        )
    if now.proved is not None and now.proved != before.proved:
        held = now.proved is ConditionStatus.TRUE
        found.append(
            Notice(
                NotifyOn.PROVED,
                namespace,
                name,
                f"{who} proof {'held' if held else 'did not hold'}: {now.proof}",
                {**data, "held": held, "proof": now.proof},
            )
        )
    return found


def cloud_event(notice: Notice, event_id: str, time: datetime) -> dict[str, Any]:
    """A CloudEvents 1.0 event in structured mode (the body of a JSON POST)."""
    return {
        "specversion": "1.0",
        "type": EVENT_TYPE_PREFIX + notice.kind.value.lower(),
        "source": f"/apis/plimsoll.dev/v1alpha1/namespaces/{notice.namespace}/capacitytests/"
        f"{notice.name}",
        "subject": f"{notice.namespace}/{notice.name}",
        "id": event_id,
        "time": time.isoformat(),
        "datacontenttype": "application/json",
        "data": {**notice.data, "summary": notice.sentence},
    }


def slack_body(notice: Notice) -> dict[str, Any]:
    """Slack's incoming-webhook body (Mattermost and Rocket.Chat read it too)."""
    mark = {
        NotifyOn.SUCCEEDED: ":white_check_mark:",
        NotifyOn.FAILED: ":x:",
        NotifyOn.REGRESSED: ":chart_with_downwards_trend:",
        NotifyOn.PROVED: ":scales:",
    }[notice.kind]
    return {"text": f"{mark} {notice.sentence}"}
