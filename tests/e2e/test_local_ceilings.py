"""On this machine: `run_test` with the local platform finds real ceilings (`make truth`).

A CPU-bound target with a known capacity (20 ms of CPU per request, pinned to
0.5 CPU: 25 requests/s) and a shortened quickstart (the mini MCP gateway, whose
memory per held stream sets its ceiling) at two memory limits.

Kept short by starting each search near its answer, not by weakening a trial.
The CPU-bound trials stay 3 s after a 1 s warm-up: its failures are the queue's
p99, and a shorter trial lets the queue grow less, so it would report a higher,
less accurate ceiling. The quickstart's users have all opened their streams
(a 2 s ramp) a second before its 3 s trials end, so memory is full in every one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.confirmation import Finding
from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.step import LimitedBy, Verdict
from plimsoll.api.units import parse_memory
from plimsoll.cli.spec_file import read_capacity_tests
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, RecordingSink, marked_processes, short_cpu_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]


def _bracket_holds(report: RunReport) -> None:
    ceiling = report.ceilings[0]
    assert ceiling.level is not None
    passed = {s.level for s in report.steps if s.judgement.verdict is Verdict.PASS}
    failed = {s.level for s in report.steps if s.judgement.verdict is Verdict.FAIL}
    assert ceiling.level in passed
    assert ceiling.high in failed
    assert ceiling.level < ceiling.high
    assert all(level <= ceiling.level for level in passed if level < ceiling.high)


async def test_cpu_bound_ceiling_is_within_15_percent_of_analytic(
    tmp_path: Path, mark: str, record_property: Any
) -> None:
    test = short_cpu_test(duration=3.0, warm_up=1.0, confirm=True)
    # From 16, not 8: the step at 8 (a third of the ceiling) narrowed nothing.
    test.spec.search = test.spec.search.model_copy(update={"start": 16})
    report = await run_test(test, lambda v: LocalPlatform("e2e-cpu", tmp_path), RecordingSink())
    assert report.outcome is Outcome.SUCCEEDED, report.message
    analytic = 0.5 / 0.020  # cores / CPU-seconds per request
    ceiling = report.ceilings[0]
    assert ceiling.level is not None
    record_property("cpu_truth_rps", analytic)
    record_property("cpu_found_rps", ceiling.level)
    record_property("cpu_limited_by", str(ceiling.limited_by))
    confirmation = ceiling.confirmation
    assert confirmation is not None
    record_property("cpu_confirmation", confirmation.finding.value)
    assert abs(ceiling.level - analytic) / analytic <= 0.15, ceiling
    assert ceiling.limited_by is LimitedBy.CPU
    # At 1 CPU (capacity 50 rps) the first failing level passes; at twice the memory not.
    assert confirmation.finding is Finding.CONFIRMED, confirmation
    _bracket_holds(report)
    assert marked_processes(mark) == []


def _quickstart(memory: str) -> CapacityTest:
    test = read_capacity_tests(ROOT / "examples" / "quickstart.yaml")[0]
    spec = test.spec
    spec.target.resources.memory = parse_memory(memory)  # type: ignore[union-attr]
    spec.trial = spec.trial.model_copy(update={"duration": 3.0, "warm_up": 1.0, "settle": 0.5})
    # From 128: both limits pass it and fail by 512, so no step is spent far below either.
    spec.search = spec.search.model_copy(update={"start": 128, "precision": 0.25, "repeats": 0})
    return test


async def test_quickstart_lower_memory_gives_lower_memory_bound_ceiling(
    tmp_path: Path, mark: str, record_property: Any
) -> None:
    reports = {}
    for memory in ("64Mi", "96Mi"):
        out = tmp_path / memory
        reports[memory] = await run_test(
            _quickstart(memory), lambda v, o=out: LocalPlatform(f"e2e-{o.name}", o), RecordingSink()
        )
    small, large = reports["64Mi"].ceilings[0], reports["96Mi"].ceilings[0]
    for memory, found in (("64mi", small), ("96mi", large)):
        record_property(f"quickstart_{memory}_found", found.level)
        record_property(f"quickstart_{memory}_limited_by", str(found.limited_by))
    for report in reports.values():
        assert report.outcome is Outcome.SUCCEEDED, report.message
        _bracket_holds(report)
    assert small.level is not None
    assert large.level is not None
    assert small.level < large.level
    assert small.limited_by is LimitedBy.MEMORY
    assert large.limited_by is LimitedBy.MEMORY
    assert marked_processes(mark) == []
