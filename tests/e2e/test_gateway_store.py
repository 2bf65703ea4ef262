"""The example MCP gateway end to end with its usage store: embedded SQLite, then PostgreSQL.

Real processes on 127.0.0.1: the gateway (`examples/targets/mini_gateway.py`)
pinned by cgroups, the mock's MCP tool, the generator's modeled users, and in
the second test a real PostgreSQL started by `examples/services/postgres-in-dir`
as a service (pinned and measured like the target) with Debian's
prometheus-postgres-exporter beside it. The setup step seeds usage rows, every
relayed tool call writes one, and the teardown removes the seeded ones and
counts what the calls wrote: each test asserts a ceiling and that count, read
from the store itself (the SQLite file; PostgreSQL through the teardown's own
query, since the server and its data are gone when the run ends).
"""

from __future__ import annotations

import shutil
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.step import Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.platforms.local.processes import free_port
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, RecordingSink, marked_processes

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]

SEEDED = 2000
SEED = ["python", "examples/targets/usage_seed.py"]


def gateway_test(services: list[dict[str, Any]]) -> CapacityTest:
    """Two short steps of a few modeled users calling a 20 ms tool; the ceiling is the
    higher one when both pass."""
    return CapacityTest.model_validate(
        {
            "metadata": {"name": "gateway-store"},
            "spec": {
                "target": {
                    "command": ["python", "examples/targets/mini_gateway.py"],
                    "portEnv": "PORT",
                    "upstreamEnv": "UPSTREAM_URL",
                    "resources": {"cpu": "0.5", "memory": "128Mi"},
                    "env": {"STREAM_BUFFER_KIB": "64", "USAGE_STORE": "sqlite"},
                    "setup": [{"name": "seed", "command": [*SEED, "seed", "--rows", str(SEEDED)]}],
                    "teardown": [{"name": "unseed", "command": [*SEED, "unseed"]}],
                },
                "services": services,
                "upstream": {
                    "mcp": {"tools": [{"name": "search_docs", "latency": {"fixed": "20ms"}}]}
                },
                "workload": {
                    "protocol": "mcp",
                    "model": "users",
                    "mix": [{"name": "tool-call", "kind": "call", "tool": "search_docs"}],
                    "users": {"burstGapMedian": "100ms", "meanGap": "300ms", "ramp": "0.5s"},
                },
                "trial": {"duration": "3s", "warmUp": "1s"},
                "search": {"strategy": "steps", "levels": [3, 6], "repeats": 0},
                "passWhen": {
                    "latency": [{"operation": "tool-call", "quantile": "p95", "below": "2s"}],
                    "errors": {"transport": "1%", "unexpected": "1%"},
                },
                # Mechanics, on a shared machine: busy-host failures stay fails here.
                "noise": {"repeatWhenBusy": False},
                "generators": {"replicas": 1, "processes": 1},
            },
        }
    )


def teardown_counts(work: Path) -> tuple[int, int]:
    """(seeded, written by calls) as the teardown's query counted them after unseeding."""
    words = (work / "logs" / "teardown-unseed.log").read_text().split()
    return int(words[words.index("seeded,") - 1]), int(words[words.index("written") - 1])


def data_dir_removed(log: Path) -> bool:
    """The helper's ready line names its data dir: is that gone?"""
    data = log.read_text().split("data ", 1)[1].split()[0]
    return not Path(data).exists()


async def run(test: CapacityTest, work: Path, monkeypatch: pytest.MonkeyPatch) -> RunReport:
    monkeypatch.chdir(ROOT)  # the spec's commands are relative to the repository, as examples'
    report = await run_test(test, lambda v: LocalPlatform("gw-store", work), RecordingSink())
    assert report.outcome is Outcome.SUCCEEDED, report.message
    # The last attempt at each level (a step a busy host made invalid is run again).
    final = {s.level: (s.judgement.verdict, s.judgement.reasons) for s in report.steps}
    assert {level: v for level, (v, _) in final.items()} == {
        3: Verdict.PASS,
        6: Verdict.PASS,
    }, final
    assert report.ceiling is not None
    assert report.ceiling.level == 6
    return report


async def test_the_gateway_writes_usage_to_its_embedded_sqlite_store(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "w"
    await run(gateway_test([]), work, monkeypatch)

    # The store is the file in the run's work dir: the seed was removed, the calls remain.
    db = sqlite3.connect(work / "usage.sqlite3")
    seeded, written = db.execute(
        "SELECT sum(seeded), sum(NOT seeded) FROM usage WHERE 1"
    ).fetchone()
    db.close()
    assert (seeded or 0, written) == (0, teardown_counts(work)[1])
    assert written > 0
    assert f"{SEEDED} seeded" in (work / "logs" / "setup-seed.log").read_text()
    assert marked_processes(mark) == []


POSTGRES = list(Path("/usr/lib/postgresql").glob("*/bin/postgres"))


@pytest.mark.skipif(
    not POSTGRES or not shutil.which("prometheus-postgres-exporter"),
    reason="needs Debian's postgresql and prometheus-postgres-exporter (make test installs them)",
)
async def test_the_gateway_writes_usage_to_postgresql_run_as_a_pinned_service(
    tmp_path: Path, mark: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PostgreSQL's declared port is taken: it is told its port ({port}), so it gets a free
    # one, and the exporter finds it through {postgres.port}.
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    declared = taken.getsockname()[1]
    services = [
        {
            "name": "postgres",
            "command": ["examples/services/postgres-in-dir", "{port}", "gateway", "gateway"],
            "port": declared,
            "resources": {"cpu": "0.5", "memory": "256Mi"},
            "targetEnv": {"GATEWAY_DATABASE_URL": "postgresql://gateway@{host}:{port}/gateway"},
        },
        {
            "name": "postgres-exporter",
            "command": ["prometheus-postgres-exporter", "--web.listen-address=127.0.0.1:{port}"],
            "env": {
                "DATA_SOURCE_NAME": "postgresql://gateway@127.0.0.1:{postgres.port}/gateway"
                "?sslmode=disable"
            },
            "port": free_port(),
            "readinessPath": "/metrics",
            "metricsPath": "/metrics",
        },
    ]
    work = tmp_path / "w"
    try:
        report = await run(gateway_test(services), work, monkeypatch)
    finally:
        taken.close()
    [placed] = [line for line in report.placement if line.startswith("service postgres:")]
    assert f"port {declared}," not in placed

    seeded, written = teardown_counts(work)
    assert "(postgresql" in (work / "logs" / "teardown-unseed.log").read_text()
    assert seeded == 0
    assert written > 0
    assert not (work / "usage.sqlite3").exists()  # the SQLite store was never opened
    # PostgreSQL ran pinned in its own cgroup and was measured like the target.
    store = report.steps[-1].others["postgres"]
    assert store.source == "cgroup"
    assert store.cpu_mean_cores is not None
    assert store.cpu_mean_cores > 0
    assert any("service postgres" in line and "cgroup" in line for line in report.placement)
    # Its data went with it, and nothing the run started is left.
    assert data_dir_removed(work / "logs" / "postgres.log")
    assert marked_processes(mark) == []
