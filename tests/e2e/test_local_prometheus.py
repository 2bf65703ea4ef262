"""`plimsoll run --prometheus`: the local platform's figures read back from a real Prometheus.

The Debian `prometheus` server scrapes the run's exporter every 500 ms; the
runner asks it the Kubernetes platform's PromQL. The CPU-bound target costs
20 ms of CPU per request, so at L requests/s it uses 0.02 * L cores and its
CPU per request (an extra metric) is 0.02 s; a PromQL bound of the bar reads its
working set. A second run loses Prometheus after its first step: the next step
is invalid with a reason naming the query, and the first is kept.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.resource import CapacityTest
from plimsoll.api.step import StepRecord, StepResult, Verdict
from plimsoll.cli.spec_file import read_capacity_tests
from plimsoll.metrics.exporter import CadvisorExporter
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.live import ConsoleSink
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, plimsoll, saved_report
from tests.metrics.conftest import PrometheusServer, free_port, launch_prometheus, left_behind

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]

SPEC = ROOT / "tests" / "e2e" / "specs" / "prometheus-steps.yaml"
WORK_SECONDS = 0.020  # the spec's WORK_MS


async def test_run_reads_cpu_memory_extra_and_bar_from_prometheus(
    tmp_path: Path, mark: str, prometheus_servers: list[PrometheusServer]
) -> None:
    port = free_port()
    prometheus_servers.append(launch_prometheus(tmp_path / "prom", [f"127.0.0.1:{port}"], "500ms"))
    out = tmp_path / "out"
    result = await asyncio.to_thread(
        plimsoll,
        *["run", str(SPEC), "--prometheus", prometheus_servers[0].url],
        *["--exporter-listen", f"127.0.0.1:{port}", "--out", str(out), "--quiet"],
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"exporter: http://127.0.0.1:{port}/metrics" in result.stderr

    saved = saved_report(out)
    steps: list[dict[str, Any]] = saved["steps"]
    assert [s["level"] for s in steps] == [5, 10]
    for step in steps:
        target = step["target"]
        assert step["judgement"]["verdict"] == "pass", step["judgement"]
        assert target["source"] == "prometheus"
        assert target["missing"] == []
        namespace = next(q for q in target["queries"] if "container_cpu_usage" in q)
        assert namespace.startswith('sum(increase(container_cpu_usage_seconds_total{namespace="')
        assert 'container="target"' in namespace
        # The shape the target was pinned to, as cAdvisor's spec series report it.
        assert target["cpuLimitCores"] == pytest.approx(0.5)
        assert target["memoryLimitBytes"] == 128 * 2**20
        # Its CPU: 20 ms a request at the step's rate; an extra metric says the same per request.
        expected = step["level"] * WORK_SECONDS
        assert target["cpuMeanCores"] == pytest.approx(expected, rel=0.35)
        assert target["extra"]["cpu-per-request"] == pytest.approx(WORK_SECONDS, rel=0.35)
        assert not any("$" in q for q in target["queries"])  # $namespace, $window filled
        # The bar's PromQL bound was evaluated against the same server, and judged.
        bound = next(c for c in step["judgement"]["criteria"] if c["name"].startswith("target-"))
        assert 0 < bound["measured"] < 128_000_000
        assert {"mock", "generator"} <= set(step["others"])
        assert step["others"]["generator"]["source"] == "prometheus"
    assert "ceiling" in saved
    assert left_behind(mark, prometheus_servers) == []


class StopPrometheusAfterFirstStep(ConsoleSink):
    def __init__(self, test: CapacityTest, out: Path, server: PrometheusServer) -> None:
        super().__init__(test, out, quiet=True)
        self.server = server

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        await super().step_finished(record, result)
        if record.index == 0:
            await asyncio.to_thread(self.server.stop)


async def test_prometheus_gone_mid_run_makes_the_step_invalid_and_keeps_the_first(
    tmp_path: Path, mark: str, prometheus_servers: list[PrometheusServer]
) -> None:
    test = read_capacity_tests(SPEC)[0]
    exporter = CadvisorExporter()
    await exporter.start()
    try:
        prometheus_servers.append(launch_prometheus(tmp_path / "prom", [exporter.address], "500ms"))
        out = tmp_path / "out"
        sink = StopPrometheusAfterFirstStep(test, out, prometheus_servers[0])
        report = await run_test(
            test,
            lambda v: LocalPlatform(
                f"gone-{mark[:6]}",
                out / "work",
                exporter=exporter,
                prometheus_url=prometheus_servers[0].url,
            ),
            sink,
        )
    finally:
        await exporter.stop()

    assert report.outcome is Outcome.FAILED
    steps = saved_report(out)["steps"]
    first, later = steps[0], steps[1:]
    assert first["judgement"]["verdict"] == "pass"
    assert first["target"]["source"] == "prometheus"
    assert first["target"]["cpuMeanCores"] > 0
    # The next level is invalid, retried once, invalid again: the run stops with the range.
    assert [(s["level"], s["judgement"]["verdict"]) for s in later] == [
        (10, "invalid"),
        (10, "invalid"),
    ]
    for step in later:
        reasons = " ".join(step["judgement"]["reasons"])
        assert "unreachable" in reasons, reasons
        # The reason is one sentence; the unanswered queries are in the step's report.
        assert "the queries are in the report" in reasons, reasons
        missing = " ".join(step["target"]["missing"])
        assert "(query: sum(increase(container_cpu_usage_seconds_total{namespace=" in missing
        # never a silent zero (report.json leaves out what was not measured)
        assert step["target"].get("cpuMeanCores") is None
    ceiling = report.ceilings[0]
    assert (ceiling.low, ceiling.complete) == (5, False)
    assert all(s.judgement.verdict is not Verdict.PASS for s in report.steps[1:])
    assert left_behind(mark, prometheus_servers) == []
