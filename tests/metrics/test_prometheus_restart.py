"""A Prometheus restart does not cost a step: a finished window is read once it is back.

The real server (Debian's `/usr/bin/prometheus`) scrapes a real exporter showing a
sleeping process as the target's container. After a window is complete and
scraped, the server is stopped. Asked with a budget shorter than the outage, the
retries end within `retry_for` and every figure is missing with the reason, so
the step is invalid (never a silent zero). Asked again while the server is
started on the same port and TSDB a few seconds later, every figure is read with
nothing missing. Short budgets keep the test quick.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from plimsoll.metrics.exporter import CadvisorExporter, ExportedContainer
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.promql import Selector
from plimsoll.metrics.source import Window
from tests.metrics.conftest import PrometheusServer, StartPrometheus

pytestmark = pytest.mark.slow

NS = "restart-test"


def _restart(server: PrometheusServer) -> None:
    """Start the stopped server again with its own arguments: same port, same TSDB."""
    with (server.home / "prometheus.log").open("ab") as log:
        server.process = subprocess.Popen(server.process.args, stdout=log, stderr=subprocess.STDOUT)


@pytest.fixture
async def exporter() -> AsyncIterator[CadvisorExporter]:
    sleeper = await asyncio.create_subprocess_exec("sleep", "120", start_new_session=True)
    exported = CadvisorExporter(
        [ExportedContainer(NS, "target-0", "target", pgid=os.getpgid(sleeper.pid))]
    )
    await exported.start()
    yield exported
    await exported.stop()
    sleeper.kill()
    await sleeper.wait()


async def _a_scraped_window(server: PrometheusServer) -> Window:
    await asyncio.sleep(1.5)  # scrapes before the window, for the rates
    start = datetime.now(UTC)
    await asyncio.sleep(5.0)
    window = Window(start, datetime.now(UTC))
    await asyncio.sleep(2.5)  # the last scrape of the window is in
    return window


def _source(server: PrometheusServer, retry_for: float) -> PrometheusSource:
    return PrometheusSource(
        server.url,
        {"target": Selector(NS, "target-.*")},
        scrape_interval=1.0,
        settle=1.5,
        retry_for=retry_for,
        timeout=2.0,
    )


async def test_a_window_is_read_across_a_prometheus_restart(
    exporter: CadvisorExporter, prometheus: StartPrometheus
) -> None:
    server = await prometheus([exporter.address])
    window = await _a_scraped_window(server)
    server.stop()

    # Down past a short budget: every figure missing with the reason, within the budget.
    started = time.monotonic()
    gone = (await _source(server, retry_for=2.0).usage(window))["target"]
    assert 1.0 <= time.monotonic() - started <= 8.0
    assert gone.missing
    assert all("unreachable" in reason for reason in gone.missing)
    assert "attempts over" in gone.missing[0]
    assert gone.cpu_mean_cores is None

    # Back within the budget: the same finished window is read whole.
    async def come_back() -> None:
        await asyncio.sleep(3.0)
        _restart(server)

    back = asyncio.create_task(come_back())
    started = time.monotonic()
    usage = (await _source(server, retry_for=60.0).usage(window))["target"]
    await back
    assert usage.missing == [], server.log()
    assert usage.memory_max_bytes is not None
    assert usage.memory_max_bytes > 0
    assert usage.cpu_mean_cores is not None
    assert time.monotonic() - started >= 3.0  # it did wait for the server


def test_retry_for_is_a_spec_field_with_a_two_minute_default() -> None:
    from plimsoll.api.spec import Metrics

    assert Metrics().retry_for == 120.0
    assert Metrics.model_validate({"retryFor": "30s"}).retry_for == 30.0
