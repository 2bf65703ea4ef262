"""A run the operator stops (its deadline passed) says why in its one final write.

The runner, cancelled, reports "interrupted"; the supervisor tells the sink the reason
first, so no reader of the status sees Failed without it (CI saw the bare interruption
once, when the reason came in a second write)."""

from __future__ import annotations

import json
from typing import Any

from plimsoll.api.report import Outcome
from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.controller.status import OperatorSink, StatusWriter
from plimsoll.kube.client import KubeClient
from tests.kube.flaky_server import FlakyServer
from tests.reportfixtures import Run, make_report

OWNER = {"metadata": {"name": "edge", "namespace": "perf", "uid": "u-1"}}


async def _finish(server: FlakyServer, reason: str | None) -> list[dict[str, Any]]:
    report = make_report({"default": Run(level=7, high=8)})
    report.outcome = Outcome.FAILED
    report.message = "interrupted: the steps measured so far are kept"
    client = KubeClient(server.url)
    writer = StatusWriter(client, "perf", "edge", CapacityTestStatus(phase=Phase.RUNNING))
    sink = OperatorSink(writer, OWNER)
    if reason is not None:
        sink.stopping_because(reason)
    try:
        await sink.finished(report)
    finally:
        await client.aclose()
    sent = [json.loads(body) for body in server.bodies if body]  # the report's are not patches
    return [patch["status"] for patch in sent if "status" in patch]


async def test_the_reason_given_before_the_stop_is_in_the_failed_write(
    server: FlakyServer,
) -> None:
    reason = "the run passed its deadline: 40s since it started"
    written = await _finish(server, reason)
    failed = [status for status in written if status.get("phase") == "Failed"]
    assert failed, written
    assert all(status["message"] == reason for status in failed)
    [ready] = [c for c in failed[0]["conditions"] if c["type"] == "Ready"]
    assert ready["message"] == reason


async def test_without_a_reason_the_runners_message_stands(server: FlakyServer) -> None:
    written = await _finish(server, None)
    assert written[-1]["phase"] == "Failed"
    assert written[-1]["message"] == "interrupted: the steps measured so far are kept"
