"""The edge example's Redis figures through a real Prometheus: the exporter relayed, the
example's own `metrics.extra` queries answered.

Real processes on 127.0.0.1: redis-server pinned as a service, Debian's
prometheus-redis-exporter as a second service whose page the run's exporter
relays under the run's labels, the example edge (`examples/targets/edge.py`)
with no sensors, and a real Prometheus scraping the run's exporter every
500 ms. Every request the edge serves matches one rate-limit rule, which it
sends as two Redis commands (INCRBY and EXPIRE NX) in one pipeline: the
example's calls-per-request query must say 2.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.resource import CapacityTest
from plimsoll.cli.spec_file import read_capacity_tests
from plimsoll.metrics.exporter import CadvisorExporter
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.platforms.local.processes import free_port
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, RecordingSink
from tests.metrics.conftest import PrometheusServer, launch_prometheus, left_behind

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("mark"),
    pytest.mark.skipif(
        not shutil.which("redis-server") or not shutil.which("prometheus-redis-exporter"),
        reason="needs redis-server and prometheus-redis-exporter (make test installs them)",
    ),
]

EXAMPLE = ROOT / "examples" / "edge-max-rps.yaml"
LEVEL = 20


def edge_test(redis: int, exporter: int) -> CapacityTest:
    """One step of GET /api/items through the edge, with the example's extra metrics."""
    extra = read_capacity_tests(EXAMPLE)[0].spec.metrics.extra
    services: list[dict[str, Any]] = [
        {
            "name": "valkey",
            "command": ["redis-server", "--port", str(redis), "--bind", "127.0.0.1"],
            "args": ["--save", "", "--appendonly", "no"],
            "port": redis,
            "resources": {"cpu": "0.25", "memory": "128Mi"},
            "targetEnv": {"EDGE_VALKEY_ADDR": "{host}:{port}"},
        },
        {
            "name": "valkey-exporter",
            "command": ["prometheus-redis-exporter", "-redis.addr", f"redis://127.0.0.1:{redis}"],
            "args": ["-web.listen-address", f"127.0.0.1:{exporter}"],
            "port": exporter,
            "readinessPath": "/metrics",
            "metricsPath": "/metrics",
        },
    ]
    return CapacityTest.model_validate(
        {
            "metadata": {"name": "edge-redis"},
            "spec": {
                "target": {
                    "command": ["python", "examples/targets/edge.py"],
                    "portEnv": "PORT",
                    "upstreamEnv": "EDGE_UPSTREAM_URL",
                    "resources": {"cpu": "0.5", "memory": "128Mi"},
                    "env": {"SENSORS": "0"},
                },
                "services": services,
                "upstream": {"routes": [{"name": "items", "path": "/api/items"}]},
                "workload": {
                    "model": "rate",
                    "arrival": "uniform",
                    "mix": [{"name": "api", "path": "/api/items"}],
                    "clientIps": {"pool": 1000, "verifyPath": "/whoami"},
                },
                "trial": {"duration": "4s", "warmUp": "1s"},
                "search": {"strategy": "steps", "levels": [LEVEL], "repeats": 0},
                "passWhen": {"minAchieved": "90%"},
                "noise": {"repeatWhenBusy": False},
                "metrics": {"extra": [m.model_dump(by_alias=True) for m in extra]},
                "generators": {"replicas": 1, "processes": 1},
            },
        }
    )


async def test_the_examples_redis_queries_answer_through_the_relayed_exporter(
    tmp_path: Path,
    mark: str,
    prometheus_servers: list[PrometheusServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    exporter = CadvisorExporter()
    await exporter.start()
    try:
        prometheus_servers.append(launch_prometheus(tmp_path / "prom", [exporter.address], "500ms"))
        test = edge_test(free_port(), free_port())
        report = await run_test(
            test,
            lambda v: LocalPlatform(
                f"edge-{mark[:6]}",
                tmp_path / "work",
                exporter=exporter,
                prometheus_url=prometheus_servers[0].url,
            ),
            RecordingSink(),
        )
    finally:
        await exporter.stop()

    assert report.outcome is Outcome.SUCCEEDED, report.message
    [step] = report.steps
    target = step.target
    assert target.source == "prometheus"
    assert target.missing == []
    # One rule a request, INCRBY + EXPIRE NX: two commands, the exporter's own left out.
    # (2.0 on a quiet host; a scrape the loaded host delayed at the window's edge shortens
    # the extrapolation, so the bound is as wide as the other Prometheus tests'.)
    assert target.extra["valkey-calls-per-request"] == pytest.approx(2.0, rel=0.35)
    per_key = target.extra["valkey-bytes-per-key"]
    assert math.isfinite(per_key)
    assert per_key > 0
    assert all("$" not in query for query in target.queries)
    # Redis ran pinned, measured through Prometheus like the target.
    assert step.others["valkey"].source == "prometheus"
    assert step.others["valkey"].cpu_mean_cores is not None
    assert left_behind(mark, prometheus_servers) == []
