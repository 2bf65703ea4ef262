"""The Prometheus source against the real server scraping the real exporter.

A CPU burner pinned to 0.5 CPU in a v1 cgroup is read two ways at once: directly
from its cgroup (the local source) and through exporter -> Prometheus -> PromQL.
They must agree within 10%: that proves the PromQL, the window arithmetic and the
exporter's cAdvisor names together.
"""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime, timedelta

import pytest

from plimsoll.api.spec import ExtraMetric
from plimsoll.metrics.exporter import CadvisorExporter, ExportedContainer
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.promql import Selector
from plimsoll.metrics.sampler import LocalSource, Sampler
from plimsoll.metrics.source import Window
from tests.metrics.conftest import MakeCgroup, StartPrometheus

MIB = 1 << 20
NS = "plimsoll-test"

pytestmark = pytest.mark.slow

CPU_QUERY = (
    'sum(increase(container_cpu_usage_seconds_total{namespace="plimsoll-test",pod=~"target-.*",'
    'container!="",container!="POD"}['
)
EXTRA = [
    ExtraMetric(
        name="ws",
        query='sum(container_memory_working_set_bytes{namespace="$namespace",pod="target-0"})',
    ),
    ExtraMetric(
        name="cpu-seconds",
        query=f'sum(increase(container_cpu_usage_seconds_total{{namespace="{NS}",pod="target-0"}}[$window]))',
    ),
    ExtraMetric(name="broken", query="sum(rate(container_cpu_usage_seconds_total[1m]"),
    ExtraMetric(name="absent", query="sum(no_such_metric)"),
]


async def _window(seconds: float) -> Window:
    start = datetime.now(UTC)
    await asyncio.sleep(seconds)
    return Window(start, datetime.now(UTC))


async def test_prometheus_agrees_with_the_cgroup_then_goes_missing_when_stopped(
    cgroup_v1: MakeCgroup, prometheus: StartPrometheus
) -> None:
    group = cgroup_v1(cpu=0.5, memory=256 * MIB)
    burner = group.spawn_burner(mib=48)
    # The same burner shown a second time, unpinned, read from /proc: as the local
    # platform shows the mock. It "restarts after an OOM kill" during the window.
    mock = ExportedContainer(NS, "mock-0", "mock", pgid=os.getpgid(burner.pid))
    exporter = CadvisorExporter(
        [ExportedContainer(NS, "target-0", "target", paths=group.paths), mock]
    )
    await exporter.start()
    local = LocalSource({"target": Sampler.for_cgroup(group.paths, interval=0.25)})
    local.start()
    try:
        server = await prometheus([exporter.address], scrape_interval="1s")
        await asyncio.sleep(1.5)  # a few scrapes in before the window opens
        start = datetime.now(UTC)
        await asyncio.sleep(4.0)
        mock.restarts, mock.last_terminated_reason = 1, "OOMKilled"
        await asyncio.sleep(4.0)
        window = Window(start, datetime.now(UTC))
        source = PrometheusSource(
            server.url,
            {"target": Selector(NS, "target-.*"), "mock": Selector(NS, "mock-.*")},
            settle=1.5,
            attempts=2,
            backoff=0.1,
            extra=EXTRA,
        )
        steps = [await source.usage(window)]
        by_cgroup = (await local.usage(window))["target"]
        kept = steps[0]["target"].model_copy(deep=True)
        # Prometheus dies during the next step: that step's window ends after the stop.
        started = datetime.now(UTC)
        server.stop()
        await asyncio.sleep(0.5)
        steps.append(await source.usage(Window(started - timedelta(seconds=6), datetime.now(UTC))))
    finally:
        await local.stop()
        await exporter.stop()

    by_prometheus = steps[0]["target"]
    assert await source.scrape_interval() == 1.0  # discovered from the server's config
    assert by_cgroup.missing == []
    # Everything but the two deliberately bad extra metrics was read.
    assert len(by_prometheus.missing) == 2, by_prometheus.missing
    # The real server's refusal: its status code and errorType, never its error text.
    assert by_prometheus.missing[0].startswith(
        f"broken: Prometheus at {server.url}/api/v1/query answered HTTP 400 (bad_data)"
    )
    assert "sum(rate(container_cpu_usage_seconds_total[1m]" in by_prometheus.missing[0]
    assert by_prometheus.missing[1] == "absent: no data (query: sum(no_such_metric))"

    assert by_prometheus.cpu_mean_cores == pytest.approx(by_cgroup.cpu_mean_cores, rel=0.1)
    assert by_prometheus.memory_mean_bytes == pytest.approx(by_cgroup.memory_mean_bytes, rel=0.1)
    assert by_prometheus.memory_max_bytes == pytest.approx(by_cgroup.memory_max_bytes, rel=0.1)
    assert by_prometheus.throttled_ratio == pytest.approx(by_cgroup.throttled_ratio, abs=0.1)
    assert by_prometheus.cpu_limit_cores == by_cgroup.cpu_limit_cores == 0.5
    assert by_prometheus.memory_limit_bytes == by_cgroup.memory_limit_bytes == 256 * MIB
    assert (by_prometheus.restarts, by_prometheus.oom_kills) == (0, 0)
    assert by_prometheus.extra["ws"] == pytest.approx(by_cgroup.memory_mean_bytes, rel=0.1)
    assert by_cgroup.cpu_mean_cores is not None
    assert by_prometheus.extra["cpu-seconds"] == pytest.approx(
        by_cgroup.cpu_mean_cores * window.seconds, rel=0.15
    )
    assert by_prometheus.queries[0].startswith(CPU_QUERY)

    by_proc = steps[0]["mock"]
    assert by_proc.missing == []  # unpinned: no limits, no throttling, and that is no gap
    assert (by_proc.cpu_limit_cores, by_proc.memory_limit_bytes) == (None, None)
    assert by_proc.throttled_ratio is None
    assert by_proc.cpu_mean_cores == pytest.approx(by_cgroup.cpu_mean_cores, rel=0.1)
    assert (by_proc.restarts, by_proc.oom_kills) == (1, 1)

    # The step after the stop: nothing read, every query named, the earlier step intact.
    assert steps[0]["target"] == kept
    after = steps[1]["target"]
    assert (after.cpu_mean_cores, after.memory_max_bytes, after.throttled_ratio) == (None,) * 3
    assert after.extra == {}
    assert after.missing[0].startswith(
        f"Prometheus at {server.url} unreachable: ConnectionError after 2 attempts"
    )
    assert f"(query: {CPU_QUERY}" in after.missing[0]
    assert len(after.missing) == len(after.queries) == 9 + len(EXTRA)
    assert len(steps[1]["mock"].missing) == 9
    for reason, query in zip(after.missing, after.queries, strict=True):
        assert reason.endswith(f"(query: {query})")
