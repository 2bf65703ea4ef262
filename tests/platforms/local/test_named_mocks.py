"""Named mocks on the local platform: one process each, its URL in its variable, measured.

The recorder target writes the variables it was given; each named mock serves its
own routes on its own port, and the step's figures list it beside the default mock.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from plimsoll.api.report import Outcome
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.markdown import render_markdown
from plimsoll.run.runner import run_test
from tests.localrun import RecordingSink, marked_processes, one_level_test

TARGETS = "tests/platforms/local/targets"

pytestmark = pytest.mark.usefixtures("mark")


async def test_each_named_mock_runs_serves_its_routes_and_is_measured(
    tmp_path: Path, mark: str
) -> None:
    target = {
        "command": ["python", f"{TARGETS}/recorder.py"],
        "env": {"RECORD_DIR": str(tmp_path), "RECORD_KEYS": "UPSTREAM_URL,AUTH_URL,METERING_URL"},
        "resources": {"cpu": "0.5", "memory": "128Mi"},
    }
    test = one_level_test(
        "named",
        target,
        upstreams=[
            {"name": "auth", "envVar": "AUTH_URL", "routes": [{"name": "check", "path": "/check"}]},
            {"name": "metering", "envVar": "METERING_URL", "routes": [{"name": "u", "path": "/u"}]},
        ],
        passWhen={"minAchieved": "90%", "errors": {"unexpected": 0}},
        generators={"replicas": 1, "processes": 1},
    )
    served: dict[str, int] = {}

    class Probe(RecordingSink):
        """After the step, while everything still runs, call each named mock's own route."""

        async def step_finished(self, record, result):  # type: ignore[no-untyped-def]
            await super().step_finished(record, result)
            async with httpx.AsyncClient(timeout=5) as client:
                for role, path in (("mock-auth", "/check"), ("mock-metering", "/u")):
                    answer = await client.get(platform.mock_urls[role] + path)
                    served[role] = answer.status_code

    platform = LocalPlatform("named", tmp_path / "w")
    report = await run_test(test, lambda v: platform, Probe())

    assert report.outcome is Outcome.SUCCEEDED, report.message
    [env_file] = [tmp_path / n for n in os.listdir(tmp_path) if n.startswith("env-")]
    env = json.loads(env_file.read_text())
    urls = {env["UPSTREAM_URL"], env["AUTH_URL"], env["METERING_URL"]}
    assert len(urls) == 3  # three mocks, three addresses
    assert env["AUTH_URL"] == platform.mock_urls["mock-auth"]
    assert env["METERING_URL"] == platform.mock_urls["mock-metering"]
    assert served == {"mock-auth": 200, "mock-metering": 200}
    assert report.steps  # (a busy host may have repeated the step: each is measured)
    for step in report.steps:
        for role in ("mock", "mock-auth", "mock-metering"):
            assert step.others[role].memory_max_bytes is not None, role
    assert any(p.startswith("mock-auth: pid ") for p in report.placement)
    beside = render_markdown(report).split("## Beside the target")[1]
    assert "| mock-auth |" in beside
    assert "| mock-metering |" in beside
    assert marked_processes(mark) == []
