"""The confirmation experiment on real processes.

A CPU-bound target (20 ms of CPU per request) pinned to 0.5 CPU passes 10 requests/s and
fails 35 (its capacity is 25). The experiment runs 35 again at 1 CPU (capacity 50: it
passes) and at 0.5 CPU with twice the memory (still 25: it fails), so CPU is confirmed by
experiment, not only by the rule.

With the streams probe's streams held through the steps (`holdDuringSteps`), the
experiment holds them too: the quickstart gateway keeps 256 KiB per held stream, pinned
to 64 MiB; 80 probe streams (20 MiB) and 20 users pass, 120 users (30 MiB more) run it
out of memory. At twice the memory they pass; at twice the CPU, with the 80 streams held,
they fail (without them they would fit in 64 MiB and pass, and the experiment could not
tell the resources apart), so memory is confirmed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from plimsoll.api.confirmation import Finding
from plimsoll.api.report import Outcome
from plimsoll.api.resource import load_capacity_test
from plimsoll.api.spec import Strategy, Variant
from plimsoll.api.step import LimitedBy, Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.html import render_html
from plimsoll.run.runner import run_test
from tests.localrun import ROOT, RecordingSink, marked_processes, short_cpu_test

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]


async def test_doubling_the_cpu_passes_the_failing_level_and_doubling_memory_does_not(
    tmp_path: Path, mark: str
) -> None:
    test = short_cpu_test(duration=1.5, warm_up=0.5, confirm=True)
    test.spec.search = test.spec.search.model_copy(
        update={"strategy": Strategy.STEPS, "levels": [10, 35]}
    )
    started: list[str] = []

    def make(variant: Variant | None) -> LocalPlatform:
        name = variant.name if variant else "default"
        started.append(name)
        return LocalPlatform(f"confirm-{name}", tmp_path / name)

    report = await run_test(test, make, RecordingSink())
    assert report.outcome is Outcome.SUCCEEDED, report.message
    ceiling = report.ceilings[0]
    assert (ceiling.level, ceiling.high) == (10, 35), report.steps
    assert started == ["default", "default-2x-cpu", "default-2x-memory"]
    confirmation = ceiling.confirmation
    assert confirmation is not None
    verdicts = {t.doubled: t.verdict for t in confirmation.trials}
    assert verdicts == {LimitedBy.CPU: Verdict.PASS, LimitedBy.MEMORY: Verdict.FAIL}, (
        confirmation.trials
    )
    assert confirmation.finding is Finding.CONFIRMED
    assert ceiling.limited_by is LimitedBy.CPU
    assert [t.shape.cpu for t in confirmation.trials] == [1.0, 0.5]
    summary = report.summary[0]
    assert "confirmed: at 2× CPU 35 requests per second passed, at 2× memory it failed" in summary
    assert [s.level for s in report.steps] == [10, 35]  # the experiment's trials are no steps
    assert "The limit, by experiment" in render_html(report)
    assert marked_processes(mark) == []


async def test_the_experiment_holds_the_streams_the_search_held(tmp_path: Path, mark: str) -> None:
    document = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    spec = document["spec"]
    spec["target"]["resources"] = {"cpu": "0.5", "memory": "64Mi"}
    spec["workload"]["streams"] = {
        "count": 80, "kind": "sse", "path": "/mcp", "holdDuringSteps": True,
    }  # fmt: skip
    spec["trial"] = {"duration": "3s", "warmUp": "1s", "settle": "0.5s"}
    spec["search"] = {"strategy": "steps", "levels": [20, 120], "repeats": 0}
    spec["attribution"] = {"confirm": True}
    test = load_capacity_test(document)

    def make(variant: Variant | None) -> LocalPlatform:
        name = variant.name if variant else "default"
        return LocalPlatform(f"held-{name}", tmp_path / name)

    report = await run_test(test, make, RecordingSink())
    assert report.outcome is Outcome.SUCCEEDED, report.message
    verdicts = {s.level: s.judgement.verdict for s in report.steps}
    assert verdicts == {20: Verdict.PASS, 120: Verdict.FAIL}, report.steps
    ceiling = report.ceilings[0]
    assert ceiling.limited_by is LimitedBy.MEMORY, ceiling
    confirmation = ceiling.confirmation
    assert confirmation is not None
    trials = {t.doubled: t for t in confirmation.trials}
    assert {d: t.verdict for d, t in trials.items()} == {
        LimitedBy.MEMORY: Verdict.PASS,
        LimitedBy.CPU: Verdict.FAIL,
    }, confirmation.trials
    # Both began with the 80 streams open (the one at 64 MiB then ran out of memory).
    assert [t.held_streams for t in confirmation.trials] == [80, 80]
    assert confirmation.finding is Finding.CONFIRMED
    assert marked_processes(mark) == []
