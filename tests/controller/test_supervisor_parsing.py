"""The supervisor reads the live body's status and schedule once per change, not per poll."""

from __future__ import annotations

from typing import Any

from plimsoll.api.status import Phase
from plimsoll.controller.context import OperatorContext
from plimsoll.controller.supervisor import Supervisor


def body(version: str | None, phase: str, schedule: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "t", "namespace": "perf", "uid": "u-1", "generation": 1}
    if version is not None:
        meta["resourceVersion"] = version
    spec = {"schedule": {"cron": schedule}} if schedule else {}
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def test_one_parse_serves_every_poll_until_the_resource_version_changes() -> None:
    live = body("10", "Running", schedule="0 3 * * *")
    supervisor = Supervisor(OperatorContext(), live, stopped=None)
    first = supervisor._parsed()
    assert first.status is not None
    assert first.status.phase is Phase.RUNNING
    assert first.schedule is not None
    supervisor.desired()
    assert supervisor._parsed() is first  # polled again: the same parse
    live.clear()
    live.update(body("11", "Succeeded"))  # kopf updates the body in place
    second = supervisor._parsed()
    assert second is not first
    assert second.status is not None
    assert second.status.phase is Phase.SUCCEEDED
    assert second.schedule is None


def test_a_body_without_a_resource_version_is_read_each_time() -> None:
    live = body(None, "Running")
    supervisor = Supervisor(OperatorContext(), live, stopped=None)
    assert supervisor._parsed() is not supervisor._parsed()
