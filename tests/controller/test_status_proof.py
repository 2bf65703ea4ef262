"""A proof run puts its outcome in the status: the sentence, and `Proved` True or False.

The real `OperatorSink` and `StatusWriter` write to a real HTTP server on 127.0.0.1;
the phase is Succeeded either way (the proof ran), and the condition says whether
the deployment held, with the sentence as its message (the Argo CD health check
turns Proved=False into Degraded: tests/charts)."""

from __future__ import annotations

import asyncio
import json

import pytest

from plimsoll.api.notify import NotifyOn
from plimsoll.api.proof import Proof
from plimsoll.api.report import Outcome
from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.controller.status import OperatorSink, StatusWriter
from plimsoll.decide.notifications import Notice
from plimsoll.kube.client import KubeClient
from tests.kube.flaky_server import FlakyServer
from tests.reportfixtures import Run, make_report

OWNER = {"metadata": {"name": "edge", "namespace": "perf", "uid": "u-1"}}


@pytest.mark.parametrize("held", [True, False])
async def test_the_proof_reaches_the_status_with_its_condition(
    server: FlakyServer, held: bool
) -> None:
    report = make_report({"default": Run(level=600, high=None)})
    report.outcome = Outcome.SUCCEEDED
    sentence = "3 replicas across 3 zones held 600 requests/s; ...; it held."
    report.proof = Proof(
        held=held, level=600, unit="rps", replicas=3, zones=["a", "b", "c"], sentence=sentence
    )
    report.summary = [sentence]
    client = KubeClient(server.url)
    writer = StatusWriter(client, "perf", "edge", CapacityTestStatus(phase=Phase.RUNNING))
    try:
        await OperatorSink(writer, OWNER).finished(report)
    finally:
        await client.aclose()
    sent = json.loads(server.bodies[-1])["status"]
    assert sent["phase"] == "Succeeded"
    assert sent["proof"]["held"] is held
    assert sent["message"] == sentence
    [proved] = [c for c in sent["conditions"] if c["type"] == "Proved"]
    assert proved["status"] == ("True" if held else "False")
    assert proved["reason"] == ("Held" if held else "NotHeld")
    assert proved["message"] == sentence


async def test_the_end_of_a_run_hands_its_changes_to_the_notifier(server: FlakyServer) -> None:
    report = make_report({"default": Run(level=600, high=None)})
    report.outcome = Outcome.SUCCEEDED
    report.proof = Proof(
        held=True, level=600, unit="rps", replicas=3, zones=["a"], sentence="it held."
    )
    told: list[list[Notice]] = []

    async def on_notices(found: list[Notice]) -> None:
        told.append(found)

    client = KubeClient(server.url)
    writer = StatusWriter(client, "perf", "edge", CapacityTestStatus(phase=Phase.RUNNING))
    sink = OperatorSink(writer, OWNER, on_notices=on_notices)
    try:
        await sink.finished(report)
        await asyncio.gather(*sink.sending)  # sent in the background, after the write
    finally:
        await client.aclose()
    [found] = told
    assert [n.kind for n in found] == [NotifyOn.SUCCEEDED, NotifyOn.PROVED]
    assert found[1].data["held"] is True
    assert json.loads(server.bodies[-1])["status"]["phase"] == "Succeeded"  # written first
