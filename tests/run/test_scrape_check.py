"""Before the first trial, a run whose trials are too short for Prometheus's scrape
interval stops with the exact fix, having spent no trial.

A real Prometheus scrapes the run's exporter every 15 s; the spec does not say so
(`metrics.scrapeInterval` unset), so the run discovers it, and its 4 s trials
cannot be read at that interval.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from plimsoll.platforms.local.processes import free_port
from tests.localrun import CPU_SPEC, marked_processes, plimsoll, saved_report
from tests.metrics.conftest import PrometheusServer, launch_prometheus

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]


def _left_behind(mark: str, servers: list[PrometheusServer]) -> list[int]:
    """The run's processes still alive (the test's own Prometheus is not the run's)."""
    ours = {s.process.pid for s in servers}
    return [pid for pid in marked_processes(mark) if pid not in ours]


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[PrometheusServer]]:
    started: list[PrometheusServer] = []
    yield started
    for server in started:
        server.stop()
        shutil.rmtree(server.home, ignore_errors=True)


def test_a_trial_too_short_for_the_discovered_interval_stops_before_any_step(
    tmp_path: Path, mark: str, servers: list[PrometheusServer]
) -> None:
    port = free_port()
    servers.append(launch_prometheus(tmp_path / "prom", [f"127.0.0.1:{port}"], "15s"))
    out = tmp_path / "out"
    result = plimsoll(
        *["run", str(CPU_SPEC), "--prometheus", servers[0].url, "--quiet"],
        *["--exporter-listen", f"127.0.0.1:{port}", "--out", str(out), "--scrape-wait", "60"],
    )
    assert result.returncode == 1, result.stderr[-3000:]
    saved = saved_report(out)
    assert saved["steps"] == []
    message = saved["message"]
    assert "a 4 s measured window is too short for Prometheus at a 15 s scrape interval" in message
    assert "Fix: trial.duration ≥ 45 s at a 15 s scrape interval" in message
    assert "scrape the target at least every 1.33 s" in message
    assert _left_behind(mark, servers) == []


def test_the_spec_interval_is_checked_without_asking_the_server(
    tmp_path: Path, mark: str, servers: list[PrometheusServer]
) -> None:
    document = yaml.safe_load(CPU_SPEC.read_text())
    document["spec"]["metrics"] = {"scrapeInterval": "30s"}
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(document))
    port = free_port()
    servers.append(launch_prometheus(tmp_path / "prom", [f"127.0.0.1:{port}"], "1s"))
    out = tmp_path / "out"
    result = plimsoll(
        *["run", str(spec), "--prometheus", servers[0].url, "--quiet"],
        *["--exporter-listen", f"127.0.0.1:{port}", "--out", str(out)],
    )
    assert result.returncode == 1, result.stderr[-3000:]
    saved = saved_report(out)
    assert saved["steps"] == []
    assert "trial.duration ≥ 90 s at a 30 s scrape interval" in saved["message"]
    assert _left_behind(mark, servers) == []
