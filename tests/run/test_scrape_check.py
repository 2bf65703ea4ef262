"""Before the first trial, a run whose trials are too short for Prometheus's scrape
interval stops with the exact fix, having spent no trial.

A real Prometheus scrapes the run's exporter every 15 s; the spec does not say so
(`metrics.scrapeInterval` unset), so the run discovers it, and its 4 s trials
cannot be read at that interval.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from plimsoll.platforms.local.processes import free_port
from tests.localrun import CPU_SPEC, plimsoll, saved_report
from tests.metrics.conftest import PrometheusServer, launch_prometheus, left_behind

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]


def test_a_trial_too_short_for_the_discovered_interval_stops_before_any_step(
    tmp_path: Path, mark: str, prometheus_servers: list[PrometheusServer]
) -> None:
    port = free_port()
    prometheus_servers.append(launch_prometheus(tmp_path / "prom", [f"127.0.0.1:{port}"], "15s"))
    out = tmp_path / "out"
    result = plimsoll(
        *["run", str(CPU_SPEC), "--prometheus", prometheus_servers[0].url, "--quiet"],
        *["--exporter-listen", f"127.0.0.1:{port}", "--out", str(out), "--scrape-wait", "60"],
    )
    assert result.returncode == 1, result.stderr[-3000:]
    saved = saved_report(out)
    assert saved["steps"] == []
    message = saved["message"]
    assert "a 4 s measured window is too short for Prometheus at a 15 s scrape interval" in message
    assert "Fix: trial.duration ≥ 45 s at a 15 s scrape interval" in message
    assert "scrape the target at least every 1.33 s" in message
    assert left_behind(mark, prometheus_servers) == []


def test_the_spec_interval_is_checked_without_asking_the_server(
    tmp_path: Path, mark: str, prometheus_servers: list[PrometheusServer]
) -> None:
    document = yaml.safe_load(CPU_SPEC.read_text())
    document["spec"]["metrics"] = {"scrapeInterval": "30s"}
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(document))
    port = free_port()
    prometheus_servers.append(launch_prometheus(tmp_path / "prom", [f"127.0.0.1:{port}"], "1s"))
    out = tmp_path / "out"
    result = plimsoll(
        *["run", str(spec), "--prometheus", prometheus_servers[0].url, "--quiet"],
        *["--exporter-listen", f"127.0.0.1:{port}", "--out", str(out)],
    )
    assert result.returncode == 1, result.stderr[-3000:]
    saved = saved_report(out)
    assert saved["steps"] == []
    assert "trial.duration ≥ 90 s at a 30 s scrape interval" in saved["message"]
    assert left_behind(mark, prometheus_servers) == []
