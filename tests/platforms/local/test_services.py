"""The local platform's services and setup steps, on real processes.

A tiny TCP key-value store (`targets/kvstore.py`, standing in for redis-server)
runs as a service; its address reaches the target through `targetEnv`; a setup
step seeds it before the first trial, and the target answers only once seeded.
A setup step that fails stops the run with its log lines, and leaves nothing.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.resource import CapacityTest
from plimsoll.api.step import Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.platforms.local.processes import free_port
from plimsoll.report.markdown import render_markdown
from plimsoll.run.runner import run_test
from tests.localrun import RecordingSink, marked_processes, one_level_test

TARGETS = "tests/platforms/local/targets"

pytestmark = pytest.mark.usefixtures("mark")


def store_test(record: Path, store_port: int, setup: list[dict[str, Any]]) -> CapacityTest:
    target = {
        "command": ["python", f"{TARGETS}/recorder.py"],
        "env": {"RECORD_DIR": str(record), "RECORD_KEYS": "STORE_ADDR,UPSTREAM_URL"},
        "resources": {"cpu": "0.5", "memory": "128Mi"},
        "setup": setup,
    }
    store = {
        "name": "store",
        "command": ["python", f"{TARGETS}/kvstore.py"],
        "args": [str(store_port)],
        "port": store_port,
        "targetEnv": {"STORE_ADDR": "{host}:{port}"},
    }
    return one_level_test(
        "services",
        target,
        services=[store],
        passWhen={"minAchieved": "90%", "errors": {"unexpected": 0}},
        generators={"replicas": 1, "processes": 1},
    )


async def test_service_reaches_the_target_setup_seeds_it_first_and_both_are_measured(
    tmp_path: Path, mark: str
) -> None:
    port = free_port()
    seed = [{"name": "seed", "command": ["python", f"{TARGETS}/kvset.py", "seeded", "yes"]}]
    test = store_test(tmp_path, port, seed)
    report = await run_test(test, lambda v: LocalPlatform("svc", tmp_path / "w"), RecordingSink())

    assert report.outcome is Outcome.SUCCEEDED, report.message
    [step] = report.steps
    # A pass needs every /work answered 200, which the target gives only once seeded.
    assert step.judgement.verdict is Verdict.PASS, step.judgement.reasons
    [env_file] = [tmp_path / n for n in os.listdir(tmp_path) if n.startswith("env-")]
    env = json.loads(env_file.read_text())
    assert env["STORE_ADDR"] == f"127.0.0.1:{port}"
    assert env["UPSTREAM_URL"].startswith("http://127.0.0.1:")
    # The store's log shows the seed, written before the first trial began.
    log = (tmp_path / "w" / "logs" / "store.log").read_text().split()
    seeded_at = float(log[log.index("SET") - 1])
    assert seeded_at < step.started_at.timestamp()
    assert "seeded seeded" in (tmp_path / "w" / "logs" / "setup-seed.log").read_text()
    # The service is measured beside the target, in the same step.
    store = step.others["store"]
    assert store.source == "proc"
    assert store.cpu_mean_cores is not None
    assert store.memory_max_bytes is not None
    assert store.memory_max_bytes > 2**20
    assert step.target is not None
    assert step.target.memory_max_bytes is not None
    assert any(p.startswith("service store: pid ") for p in report.placement)
    beside = render_markdown(report).split("## Beside the target")[1]
    assert f"| 0 | default | 10 | store | proc | {store.cpu_mean_cores:,.2f} |" in beside
    assert marked_processes(mark) == []


async def test_failing_setup_stops_the_run_with_its_log_and_leaves_nothing(
    tmp_path: Path, mark: str
) -> None:
    broken = [
        {
            "name": "seed",
            "command": ["python", "-c", "print('no fixtures to load'); raise SystemExit(3)"],
        }
    ]
    sink = RecordingSink()
    before = datetime.now().timestamp()
    report = await run_test(
        store_test(tmp_path, free_port(), broken),
        lambda v: LocalPlatform("setup", tmp_path / "w"),
        sink,
    )
    assert report.outcome is Outcome.FAILED
    assert "setup-seed failed (exit code 3)" in report.message
    assert "no fixtures to load" in report.message  # its last log lines, shown to the user
    assert report.steps == []  # no trial ran against an unseeded target
    assert sink.report is report  # the report is still written
    assert report.ended_at is not None
    assert report.ended_at.timestamp() >= before
    assert marked_processes(mark) == []
