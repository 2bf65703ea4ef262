"""`target.url`: the local platform drives a service that already runs.

The test starts the CPU-bound example target itself; the run must start only
the mock and the generator, pin nothing, leave the service running, and say
that the service's shape and resources are unknown.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.step import LimitedBy, Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.platforms.local.processes import free_port
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, RecordingSink, marked_processes, one_level_test

pytestmark = pytest.mark.usefixtures("mark")


@pytest.fixture
async def existing() -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """The user's own service, started outside Plimsoll (and without the test mark)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PLIMSOLL_TEST_MARK"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "examples" / "targets" / "cpu_bound.py"),
        env={**env, "PORT": str(port), "WORK_MS": "2"},
    )
    url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient() as client:
        for _ in range(100):
            try:
                if (await client.get(f"{url}/healthz")).is_success:
                    break
            except httpx.TransportError:
                await asyncio.sleep(0.05)
    yield url, process
    process.terminate()
    await process.wait()


async def test_existing_service_is_driven_not_started_nor_pinned(
    tmp_path: Path, mark: str, existing: tuple[str, asyncio.subprocess.Process]
) -> None:
    url, service = existing
    test = one_level_test("external", {"url": url}, generators={"replicas": 1, "processes": 1})
    platforms: list[LocalPlatform] = []

    def make(variant: object) -> LocalPlatform:
        platforms.append(LocalPlatform(f"url-{mark[:6]}", tmp_path))
        return platforms[-1]

    report = await run_test(test, make, RecordingSink())

    assert report.outcome is Outcome.SUCCEEDED, report.message
    [step] = report.steps
    assert step.judgement.verdict is Verdict.PASS, step.judgement.reasons
    assert step.client is not None
    assert step.client.sent > 0
    # Nothing of the target was started, pinned or measured.
    assert sorted(p.name for p in platforms[0].processes) == ["generator", "mock"]
    assert platforms[0].launcher.groups == []
    assert step.target is None
    assert report.pinned is False
    assert any("existing service" in w and "unknown" in w for w in report.warnings)
    assert f"target: existing service at {url} (not started)" in report.placement
    # The report says so: no shape, and no idea what would limit it.
    ceiling = report.ceilings[0]
    assert (ceiling.level, ceiling.limited_by) == (10, LimitedBy.UNKNOWN)
    assert "shape unknown" in report.summary[0]
    # One level, and it passed: "at least", which names no limit (issue 51).
    assert "sustains at least 10 requests per second" in report.summary[0]
    assert "nothing shows where it stops or what limits it" in report.summary[0]
    # The user's service outlives the run; every process the run started is gone.
    assert service.returncode is None
    assert marked_processes(mark) == []
