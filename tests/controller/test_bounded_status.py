"""A long run's status and report stay bounded, and the run still resumes from them.

A 200-step run whose reasons quote long PromQL is written through the real
`OperatorSink` and `StatusWriter` to a real HTTP server on 127.0.0.1; the status
that server receives must stay under `STATUS_LIMIT`, carry no PromQL, and after
every step feed the search exactly the decision the full history gives (the
search is a pure function of the step history, so this is what resuming needs).
The report ConfigMap must fit under 1 MiB with a note saying what it left out.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest

from plimsoll.api.report import RunReport
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import CapacityTestStatus
from plimsoll.api.step import Judgement, ResourceUsage, StepRecord, StepResult, Verdict
from plimsoll.api.trial import OperationResult, TrialResult, TrialState
from plimsoll.controller.report_map import JSON_BUDGET, fit_report, write_report_config_map
from plimsoll.controller.status import OperatorSink, StatusWriter
from plimsoll.decide.search import NextTrial, next_action
from plimsoll.decide.search.stopping import searchable
from plimsoll.decide.step_summary import record_of
from plimsoll.kube.client import KubeClient
from plimsoll.shared import histogram
from tests.kube.flaky_server import Answer, FlakyServer

STATUS_LIMIT = 256 * 1024  # etcd refuses ~1.5 MiB; kubectl reads the status often
QUERY = (
    'sum(rate(container_cpu_usage_seconds_total{namespace="plimsoll-long-run-1234",'
    'pod="target",container!="",container!="POD"}[1m0s])) / '
    'sum(kube_pod_container_resource_limits{namespace="plimsoll-long-run-1234",'
    'resource="cpu"}) ' * 3
)
OWNER = {"metadata": {"name": "long", "namespace": "perf", "uid": "u-1"}}
SPEC = CapacityTestSpec.model_validate(
    {
        "target": {"command": ["true"], "port": 8080, "resources": {"cpu": "1", "memory": "64Mi"}},
        "workload": {"model": "rate", "mix": [{"name": "get", "path": "/"}]},
        "trial": {"duration": "30s"},
        "search": {"strategy": "steps", "levels": list(range(1, 191)), "maxTrials": 500},
    }
)


def _wide_histogram() -> str:
    """A real encoded histogram with values spread over many buckets (~3 KB encoded)."""
    wide = histogram.new_histogram()
    draw = random.Random(3)
    for _ in range(20_000):
        histogram.record_seconds(wide, draw.lognormvariate(-5, 2))
    return histogram.encode(wide)


WIDE = _wide_histogram()


def _verdict(level: int, attempt: int, index: int) -> Verdict:
    if index % 5 == 4 and attempt == 1:
        return Verdict.NOISY  # the host stalled: the search repeats the step
    return Verdict.PASS if level <= 150 else Verdict.FAIL


def _result(index: int, level: int, attempt: int, operations: int = 0) -> StepResult:
    verdict = _verdict(level, attempt, index)
    now = datetime(2026, 11, 30, tzinfo=UTC)
    missing = [f"cpu: no data (query: {QUERY})", f"memory: no data (query: {QUERY})"]
    reasons = (
        [f"p99 {level * 1.5:.1f} ms over 100 ms", "server metrics missing: " + "; ".join(missing)]
        if verdict is not Verdict.PASS
        else []
    )
    client = TrialResult(
        id=f"t{index}",
        state=TrialState.DONE,
        level=level,
        operations={f"op{n}": OperationResult(latency=WIDE) for n in range(operations)},
        sent=level * 30,
        measured_seconds=30.0,
    )
    return StepResult(
        index=index,
        level=level,
        attempt=attempt,
        started_at=now,
        ended_at=now,
        duration=30.0,
        client=client if operations else None,
        target=ResourceUsage(source="prometheus", queries=[QUERY] * 3, missing=missing),
        judgement=Judgement(verdict=verdict, reasons=reasons),
    )


def _run(operations: int = 0) -> list[StepResult]:
    """The steps the search takes against the simulated target, as the runner would."""
    results: list[StepResult] = []
    records: list[StepRecord] = []
    for _ in range(1000):
        action = next_action(SPEC.search, SPEC.trial, records)
        if not isinstance(action, NextTrial):
            break
        results.append(_result(len(results), action.level, action.attempt, operations))
        records.append(record_of(results[-1]))
    return results


async def test_a_200_step_run_keeps_a_small_status_that_resumes_the_same(
    server: FlakyServer,
) -> None:
    results = _run()
    assert len(results) >= 200
    client = KubeClient(server.url)
    writer = StatusWriter(client, "perf", "long", CapacityTestStatus())
    sink = OperatorSink(writer, OWNER)
    full: list[StepRecord] = []
    largest = 0
    for result in results:
        record = record_of(result)
        full.append(record)
        await sink.step_finished(record, result)
        sent = json.loads(server.bodies[-1])["status"]
        written = CapacityTestStatus.model_validate(writer.status.to_wire() | sent)
        largest = max(largest, len(json.dumps(writer.status.to_wire())))
        # what an operator restarted now would read, and decide from
        assert next_action(SPEC.search, SPEC.trial, searchable(written.steps)) == next_action(
            SPEC.search, SPEC.trial, searchable(full)
        )
    await client.aclose()

    status_text = json.dumps(writer.status.to_wire())
    print(f"status of a {len(results)}-step run: {len(status_text)} bytes (largest {largest})")
    assert largest < STATUS_LIMIT
    assert "container_cpu_usage_seconds_total" not in status_text
    assert writer.status.step_count == len(results)
    steps = writer.status.steps
    assert all(s.summarized for s in steps[:-20])
    assert not any(s.summarized for s in steps[-20:])
    assert steps[-1].reasons == [] or "no data" in " ".join(steps[-1].reasons)


def _report(results: list[StepResult]) -> RunReport:
    return RunReport(
        test_name="long",
        spec=SPEC,
        started_at=datetime(2026, 11, 30, tzinfo=UTC),
        platform="kubernetes",
        steps=results,
    )


def test_a_report_that_fits_is_left_whole() -> None:
    report = _report(_run(1)[:20])
    assert fit_report(report) is report


@pytest.mark.parametrize("operations", [0, 1, 4])
def test_a_long_report_is_fitted_with_a_note(operations: int) -> None:
    report = _report(_run(operations))
    fitted = fit_report(report)
    size = len(fitted.model_dump_json(by_alias=True, exclude_none=True))
    print(f"{len(report.steps)} steps, {operations} histograms each: {size} bytes fitted")
    assert size <= JSON_BUDGET
    assert fitted.warnings
    assert "to fit 1 MiB" in fitted.warnings[-1]
    assert len(fitted.steps) == len(report.steps)  # the verdicts of every step are kept
    assert report.steps[0].client is None or report.steps[0].client.operations  # untouched


def test_a_report_too_big_even_without_details_drops_steps_with_a_note() -> None:
    report = _report(_run())
    fitted = fit_report(report, budget=20_000)
    assert len(fitted.model_dump_json(by_alias=True, exclude_none=True)) <= 20_000
    assert any("keeps the last" in w or "leaves out all" in w for w in fitted.warnings)


async def test_the_report_config_map_stays_under_1_mib(server: FlakyServer) -> None:
    server.script = [Answer(404)]  # no report ConfigMap yet: the writer's GET finds none
    client = KubeClient(server.url)
    await write_report_config_map(client, OWNER, _report(_run(4)))
    await client.aclose()
    body = server.bodies[-1]
    assert len(body) < 1024 * 1024
    data = json.loads(body)["data"]
    assert "to fit 1 MiB" in data["report.json"]
