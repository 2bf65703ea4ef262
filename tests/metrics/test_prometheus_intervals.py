"""The Prometheus source at ordinary scrape intervals: 1 s, 5 s and 15 s.

One CPU burner pinned to 0.1 CPU in a v1 cgroup is scraped by three real
Prometheus servers at once, each at its own interval; the reference is the
cgroup's own CPU counter, read at each window's ends. Each server is asked about a
window just over the minimum the rule allows at its interval (three intervals):
the mean CPU from the counter's increase across the window, and the memory, must
agree with the cgroup within 10%, and the interval each source discovers (no
`scrape_interval` given) must be the server's. All three windows end together, so
the whole test takes about one 15 s-interval window (46 s) plus start and settle.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from plimsoll.decide.scrape_window import minimum_window
from plimsoll.metrics.cgroup import read_sample
from plimsoll.metrics.exporter import CadvisorExporter, ExportedContainer
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.promql import Selector
from plimsoll.metrics.samples import Sample
from plimsoll.metrics.source import Window
from tests.metrics.conftest import MakeCgroup, PrometheusServer, launch_prometheus

MIB = 1 << 20
NS = "plimsoll-intervals"
INTERVALS = (1.0, 5.0, 15.0)
MARGIN = 1.0  # past the rule's minimum: the window is still "three intervals" long

pytestmark = pytest.mark.slow


def _at(timestamp: float) -> datetime:
    """A Prometheus timestamp as the aware datetime a Window holds."""
    return datetime.fromtimestamp(timestamp, UTC)


async def test_cpu_and_memory_agree_with_the_cgroup_at_1_5_and_15_s(
    cgroup_v1: MakeCgroup, tmp_path: Path, prometheus_servers: list[PrometheusServer]
) -> None:
    # A tenth of a core: well under any share a busy 2-core host leaves one process, so
    # its CPU is steady and the test judges the reading, not the host's contention.
    group = cgroup_v1(cpu=0.1, memory=256 * MIB)
    group.spawn_burner(mib=48, seconds=110)
    exporter = CadvisorExporter([ExportedContainer(NS, "target-0", "target", paths=group.paths)])
    await exporter.start()
    try:
        for s in INTERVALS:
            prometheus_servers.append(
                launch_prometheus(tmp_path / f"p{s:g}", [exporter.address], f"{s:g}s")
            )
        # Prometheus hands new targets to its scrapers ~5 s after start: let it begin.
        await asyncio.sleep(8)
        end_at = time.time() + minimum_window(max(INTERVALS)) + MARGIN
        # The reference: the cgroup's own counter read at each window's ends.
        starts: dict[float, Sample] = {}
        for s in sorted(INTERVALS, reverse=True):
            await asyncio.sleep(max(0.0, end_at - minimum_window(s) - MARGIN - time.time()))
            starts[s] = read_sample(group.paths, time.time())
        await asyncio.sleep(max(0.0, end_at - time.time()))
        final = read_sample(group.paths, time.time())
        windows = {s: Window(_at(starts[s].at), _at(final.at)) for s in INTERVALS}
        sources = {
            s: PrometheusSource(server.url, {"target": Selector(NS, "target-.*")})
            for s, server in zip(INTERVALS, prometheus_servers, strict=True)
        }
        # Each source waits for its own last scrape (one interval and a second).
        read = await asyncio.gather(*(sources[s].usage(windows[s]) for s in INTERVALS))
        discovered = {s: await sources[s].scrape_interval() for s in INTERVALS}
    finally:
        await exporter.stop()

    assert discovered == {s: s for s in INTERVALS}  # from the spacing of the samples
    for s, usage in zip(INTERVALS, read, strict=True):
        prom = usage["target"]
        cgroup = (final.cpu_seconds - starts[s].cpu_seconds) / (final.at - starts[s].at)
        print(f"{s:g} s: prometheus {prom.cpu_mean_cores} cores, cgroup {cgroup:.4f} cores")
        assert prom.missing == [], (s, prom.missing)
        assert windows[s].seconds >= minimum_window(s)
        assert 0.05 < cgroup <= 0.11  # about the quota
        assert prom.cpu_mean_cores == pytest.approx(cgroup, rel=0.1), s
        assert prom.cpu_peak_cores == pytest.approx(cgroup, rel=0.25), s
        assert prom.memory_max_bytes == pytest.approx(final.working_set_bytes, rel=0.1), s
        assert prom.memory_mean_bytes == pytest.approx(final.working_set_bytes, rel=0.1), s
        assert prom.queries[0].startswith("sum(increase(container_cpu_usage_seconds_total{")
