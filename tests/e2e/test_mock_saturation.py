"""End to end on this machine: a mock pinned to a tiny shape saturates, and the step says so.

`upstream.resources` puts the mock in a cgroup of its own (50m CPU); the mini
gateway relays 600 tool calls a second to it. The verdict must be invalid with
the mock named as what ran out of CPU (by its mean use or by its throttling): a
saturated mock measures itself, not the target. Needs writable cgroups (root), as the
pinning tests do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.step import Verdict
from plimsoll.cli.spec_file import read_capacity_tests
from plimsoll.platforms.local import pinning
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, RecordingSink, marked_processes

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]

SPEC = ROOT / "tests" / "e2e" / "specs" / "mock-saturated.yaml"


def _cgroups_writable() -> bool:
    try:
        pinning.discover(None)
    except pinning.CgroupsUnavailableError:
        return False
    return True


@pytest.mark.skipif(not _cgroups_writable(), reason="needs writable cgroups (run as root)")
async def test_a_mock_with_a_tiny_cpu_shape_makes_the_step_invalid(
    tmp_path: Path, mark: str
) -> None:
    test = read_capacity_tests(SPEC)[0]
    report = await run_test(test, lambda v: LocalPlatform("e2e-mock", tmp_path), RecordingSink())
    assert report.outcome is Outcome.FAILED
    assert report.message is not None
    assert "mock used" in report.message or "mock hit its CPU quota" in report.message
    step = report.steps[0]
    mock = step.others["mock"]
    assert mock.source == "cgroup"
    assert mock.cpu_limit_cores == pytest.approx(0.05)
    # The mock ran at its quota: above generators.maxCpu (85%) of its 50m on average, or
    # held back by it in more than 85% of the CFS periods.
    assert mock.cpu_mean_cores is not None
    assert mock.throttled_ratio is not None
    assert mock.cpu_mean_cores / 0.05 > 0.85 or mock.throttled_ratio > 0.85, mock
    assert step.judgement.verdict is Verdict.INVALID
    reasons = " ".join(step.judgement.reasons)
    assert "mock used" in reasons or "mock hit its CPU quota" in reasons, reasons
    assert "it ran out of CPU" in reasons, reasons
    assert any("mock: pid" in p and "cgroup" in p for p in report.placement)
    assert marked_processes(mark) == []
