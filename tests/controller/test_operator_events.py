"""Events on a CapacityTest: their texts, and that the status writer posts them after its patch.

The texts are pure functions of the models; the posting runs against kmock's
emulated API server with the real `KubeClient`, as the operator does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import kmock
import pytest

from plimsoll.api.status import (
    CapacityTestStatus,
    Ceiling,
    ConditionStatus,
    ConditionType,
    Phase,
    Reason,
)
from plimsoll.api.step import LimitedBy, StepRecord, Verdict
from plimsoll.controller.events import (
    Event,
    EventRecorder,
    EventType,
    ceiling_event,
    event_body,
    phase_event,
    step_event,
)
from plimsoll.controller.status import StatusWriter
from plimsoll.kube.client import KubeClient
from tests.controller.fake_cluster import FakeCluster

OWNER = {
    "apiVersion": "plimsoll.dev/v1alpha1",
    "kind": "CapacityTest",
    "metadata": {"name": "quick", "namespace": "default", "uid": "u-1", "generation": 1},
    "spec": {},
}


def _record(verdict: Verdict, **figures: float) -> StepRecord:
    return StepRecord(index=2, level=40, duration=3.0, verdict=verdict, **figures)


def test_a_step_event_names_level_verdict_and_the_figures() -> None:
    event = step_event(
        _record(Verdict.FAIL, p99_ms=812.5, achieved_rate=31.2, throttled_ratio=0.64), "rps"
    )
    assert (event.type, event.reason) == (EventType.NORMAL, "StepFailed")
    assert event.message.startswith("step 2 (full, attempt 1): level 40 rps fail")
    assert "p99 812.5 ms" in event.message
    assert "achieved 31.2/s" in event.message
    assert "throttled 64%" in event.message
    invalid = step_event(
        _record(Verdict.INVALID).model_copy(update={"reasons": ["no data"]}), "users"
    )
    assert (invalid.type, invalid.reason) == (EventType.WARNING, "StepInvalid")
    assert invalid.message.endswith("level 40 users invalid | no data")


def test_ceiling_and_phase_events() -> None:
    found = Ceiling(level=40, unit="rps", limited_by=LimitedBy.MEMORY, complete=True)
    assert ceiling_event(found) == Event(
        EventType.NORMAL, "CeilingFound", "ceiling 40 rps, limited by memory"
    )
    none = Ceiling(unit="rps", complete=False, stop_reason="the first level failed")
    assert ceiling_event(none) == Event(
        EventType.WARNING, "NoCeiling", "no level passed; the first level failed"
    )
    above = Ceiling(
        level=20,
        unit="rps",
        complete=False,
        every_level_passed=True,
        stop_reason="every level passed",
    )
    assert ceiling_event(above) == Event(
        EventType.NORMAL,
        "AtLeast",
        "at least 20 rps: no level failed, no ceiling; every level passed",
    )
    assert phase_event(Phase.FAILED, "boom").type is EventType.WARNING
    assert phase_event(Phase.QUEUED, "waiting").reason == "Queued"


def test_the_event_body_is_a_core_v1_event_about_the_resource() -> None:
    body = event_body(OWNER, Event(EventType.NORMAL, "Running", "x" * 5000))
    assert (body["apiVersion"], body["kind"]) == ("v1", "Event")
    assert body["metadata"]["namespace"] == "default"
    assert body["metadata"]["name"].startswith("quick.")
    assert body["involvedObject"] | {} == {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "name": "quick",
        "namespace": "default",
        "uid": "u-1",
        "resourceVersion": "",
    }
    assert len(body["message"]) <= 1024  # the API server's limit


@pytest.fixture
async def api() -> AsyncIterator[tuple[FakeCluster, KubeClient]]:
    async with FakeCluster() as emulator, kmock.Server(emulator) as server:
        client = KubeClient(str(server.url))
        created = dict(OWNER, metadata=dict(OWNER["metadata"], resourceVersion="1"))  # type: ignore[arg-type]
        await client._call(
            "POST", "/apis/plimsoll.dev/v1alpha1/namespaces/default/capacitytests", body=created
        )
        try:
            yield emulator, client
        finally:
            await client.aclose()


async def test_events_follow_the_patch_and_only_real_changes_post_them(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    status = CapacityTestStatus(phase=Phase.PENDING)
    clock = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # noqa: E731
    writer = StatusWriter(
        client, "default", "quick", status, clock=clock, events=EventRecorder(client, OWNER)
    )
    writer.set_phase(Phase.PROVISIONING, "starting")
    writer.set_phase(Phase.PROVISIONING, "still starting")  # no change of phase: no event
    assert await writer.write()
    calls = [(m, p) for m, p, _, _ in emulator.calls if m in ("PATCH", "POST")][1:]
    assert [m for m, _ in calls] == ["PATCH", "POST"]  # the status first, then its event
    assert calls[1][1] == "/api/v1/namespaces/default/events"
    events = [e for _, _, e in emulator.live("events")]
    assert [(e["reason"], e["message"]) for e in events] == [
        ("Provisioning", "phase Provisioning: starting")
    ]
    writer.condition(ConditionType.PROVISIONED, ConditionStatus.FALSE, Reason.PROVISIONING, "")
    await writer.write()
    assert not await writer.write()  # nothing changed, nothing queued: nothing sent
    assert len(emulator.live("events")) == 1


async def test_a_refused_event_is_logged_not_raised() -> None:
    client = KubeClient("http://127.0.0.1:1")  # nothing listens: every post fails
    recorder = EventRecorder(client, OWNER)
    try:
        assert not await recorder.post(Event(EventType.NORMAL, "Running", "x"))
    finally:
        await client.aclose()
    assert recorder.posted == []


async def test_credentials_in_urls_never_reach_the_status_or_an_event(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    status = CapacityTestStatus(phase=Phase.PENDING)
    writer = StatusWriter(client, "default", "quick", status, events=EventRecorder(client, OWNER))
    writer.set_phase(Phase.FAILED, "cannot reach https://svc:hunter2@api.example.com/health")
    await writer.write()
    [(_, _, stored)] = emulator.live("capacitytests")
    events = [e["message"] for _, _, e in emulator.live("events")]
    assert "hunter2" not in str(stored["status"])
    assert "hunter2" not in str(events)
    assert "https://***@api.example.com/health" in stored["status"]["message"]
    assert "https://***@api.example.com/health" in events[0]
    assert "hunter2" in writer.status.message  # only what leaves the operator is redacted
