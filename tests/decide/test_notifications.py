"""Which changes a run's end makes (Succeeded, Failed, Regressed, Proved) and the webhook
bodies that say so: a CloudEvents 1.0 event, and Slack's text."""

from __future__ import annotations

from datetime import UTC, datetime

from plimsoll.api.notify import NotifyOn
from plimsoll.api.status import (
    CapacityTestStatus,
    Ceiling,
    Condition,
    ConditionStatus,
    ConditionType,
    Phase,
    Reason,
)
from plimsoll.decide.notifications import (
    EVENT_TYPE_PREFIX,
    Verdicts,
    cloud_event,
    notices,
    slack_body,
    verdicts_of,
)

T0 = datetime(2026, 12, 6, 16, 0, tzinfo=UTC)


def condition(
    kind: ConditionType, status: ConditionStatus, reason: Reason, message: str
) -> Condition:
    return Condition(
        type=kind, status=status, reason=reason, message=message, last_transition_time=T0
    )


def ended(phase: Phase, *conditions: Condition) -> CapacityTestStatus:
    return CapacityTestStatus(
        phase=phase,
        run_id="1a2b3c4d",
        message="ceiling 900 rps, limited by cpu",
        ceiling=Ceiling(level=900, unit="rps", complete=True),
        change="-10% REGRESSED",
        conditions=list(conditions),
    )


RUNNING = Verdicts(phase=Phase.RUNNING)
REGRESSED = condition(
    ConditionType.REGRESSED, ConditionStatus.TRUE, Reason.REGRESSED, "default: ceiling −10%"
)


def test_a_run_that_ends_regressed_gives_succeeded_and_regressed() -> None:
    found = notices(RUNNING, ended(Phase.SUCCEEDED, REGRESSED), "perf", "api")
    assert [n.kind for n in found] == [NotifyOn.SUCCEEDED, NotifyOn.REGRESSED]
    assert found[0].sentence == "CapacityTest perf/api succeeded: ceiling 900 rps, limited by cpu"
    assert found[1].sentence == "CapacityTest perf/api regressed: default: ceiling −10%"
    assert found[1].data["ceiling"] == 900
    assert found[1].data["regression"] == "default: ceiling −10%"


def test_regressed_is_told_when_it_turns_true_not_again() -> None:
    before = verdicts_of(ended(Phase.RUNNING, REGRESSED))
    found = notices(before, ended(Phase.SUCCEEDED, REGRESSED), "perf", "api")
    assert [n.kind for n in found] == [NotifyOn.SUCCEEDED]


def test_a_failed_run_and_a_proof_that_stops_holding() -> None:
    held = condition(ConditionType.PROVED, ConditionStatus.TRUE, Reason.HELD, "held 3 replicas")
    not_held = condition(
        ConditionType.PROVED, ConditionStatus.FALSE, Reason.NOT_HELD, "p99 over the bar"
    )
    before = verdicts_of(ended(Phase.RUNNING, held))
    found = notices(before, ended(Phase.FAILED, not_held), "perf", "api")
    assert [n.kind for n in found] == [NotifyOn.FAILED, NotifyOn.PROVED]
    assert found[1].data["held"] is False
    assert found[1].sentence == "CapacityTest perf/api proof did not hold: p99 over the bar"
    # the same proof verdict again is no change
    again = notices(
        verdicts_of(ended(Phase.RUNNING, not_held)), ended(Phase.FAILED, not_held), "perf", "api"
    )
    assert [n.kind for n in again] == [NotifyOn.FAILED]


def test_the_cloud_event_is_structured_cloudevents_1_0() -> None:
    [_, regressed] = notices(RUNNING, ended(Phase.SUCCEEDED, REGRESSED), "perf", "api")
    event = cloud_event(regressed, "id-1", T0)
    assert event["specversion"] == "1.0"
    assert event["type"] == EVENT_TYPE_PREFIX + "regressed"
    assert event["source"] == "/apis/plimsoll.dev/v1alpha1/namespaces/perf/capacitytests/api"
    assert (event["id"], event["time"], event["subject"]) == ("id-1", T0.isoformat(), "perf/api")
    assert event["datacontenttype"] == "application/json"
    assert event["data"]["runId"] == "1a2b3c4d"
    assert event["data"]["summary"] == regressed.sentence


def test_the_slack_body_is_one_line_of_text() -> None:
    [succeeded] = notices(RUNNING, ended(Phase.SUCCEEDED), "perf", "api")
    assert slack_body(succeeded) == {
        "text": ":white_check_mark: CapacityTest perf/api succeeded: ceiling 900 rps, "
        "limited by cpu"
    }
