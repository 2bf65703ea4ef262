"""Variants compared for real: the table, the Δ and the noise rule, in one local run.

`examples/targets/serial_work.py` serves one request at a time, each taking
SERVICE_MS: 50 requests/s at 20 ms, 25 at 40 ms. Its ceiling is set by that
service time, not by the CPU a busy shared machine happens to grant, so two
identical variants land in touching or overlapping bands (within noise) and a
variant at twice the cost per request lands a factor two below (lower, outside
noise) on any host. The doubling search bisects to 25% with one repeat; about
a minute: three variants of some seven one-second trials each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.comparison import Difference
from plimsoll.api.report import Outcome
from plimsoll.api.step import Verdict
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.files import write_report
from plimsoll.report.live import ConsoleSink
from plimsoll.run.runner import run_test
from tests.localrun import marked_processes, one_level_test, saved_report

pytestmark = pytest.mark.usefixtures("mark")


async def test_identical_variants_are_within_noise_and_double_cost_is_lower(
    tmp_path: Path, mark: str
) -> None:
    test = one_level_test(
        "compare",
        {
            "command": ["python", "examples/targets/serial_work.py"],
            "env": {"SERVICE_MS": "20"},
            "resources": {"cpu": "0.5", "memory": "128Mi"},
        },
        trial={"duration": "1s", "warmUp": "0.3s"},
        search={"strategy": "doubling", "start": 20, "precision": "25%", "repeats": 1},
        passWhen={"minAchieved": "90%", "latency": [{"quantile": "p99", "below": "300ms"}]},
        generators={"replicas": 1, "processes": 1},
        variants=[
            {"name": "base"},
            {"name": "same", "description": "the baseline again"},
            {"name": "double", "env": {"SERVICE_MS": "40"}},
        ],
    )

    def make(variant: Any) -> LocalPlatform:
        return LocalPlatform(f"c-{variant.name}-{mark[:6]}", tmp_path / variant.name)

    out = tmp_path / "out"
    report = await run_test(test, make, ConsoleSink(test, out, quiet=True))
    write_report(report, out)

    assert report.outcome is Outcome.SUCCEEDED, report.message
    comparison = report.comparison
    assert comparison is not None
    base, same, double = comparison.variants
    assert base.difference is Difference.BASELINE
    assert base.ceiling is not None
    assert same.difference is Difference.WITHIN_NOISE, comparison
    assert double.difference is Difference.LOWER, comparison
    assert double.delta_percent is not None
    assert double.delta_percent < -25, comparison
    # Figures are compared at the highest level all three passed: the heavy variant's
    # calls waited about twice as long there.
    assert comparison.common_level is not None
    assert base.at_common_level is not None
    assert double.at_common_level is not None
    assert base.at_common_level.p50_ms is not None
    assert double.at_common_level.p50_ms is not None
    assert double.at_common_level.p50_ms > 1.5 * base.at_common_level.p50_ms

    markdown = (out / "report.md").read_text()
    headline = markdown.split("\n", 2)[2].split("\n", 1)[0]
    assert headline.startswith("**same holds as many requests per second as base within noise")
    assert f"double holds {-double.delta_percent:.0f}% fewer requests per second than base" in (
        headline
    )
    assert "| double | " in markdown.split("## Ceilings")[0]  # the table comes first
    assert saved_report(out)["comparison"]["variants"][2]["difference"] == "lower"
    assert (out / "ceilings.png").exists()
    assert marked_processes(mark) == []


async def test_a_variant_s_workload_reaches_the_generators(tmp_path: Path, mark: str) -> None:
    """A variant that sends its load elsewhere (here a path the target does not serve)
    is judged on that load, not on the spec's."""
    test = one_level_test(
        "workload",
        {
            "command": ["python", "examples/targets/serial_work.py"],
            "env": {"SERVICE_MS": "5"},
            "resources": {"cpu": "0.5", "memory": "128Mi"},
        },
        trial={"duration": "1s", "warmUp": "0.3s"},
        generators={"replicas": 1, "processes": 1},
        variants=[
            {"name": "served"},
            {
                "name": "elsewhere",
                "workload": {"model": "rate", "mix": [{"name": "work", "path": "/missing"}]},
            },
        ],
    )

    def make(variant: Any) -> LocalPlatform:
        return LocalPlatform(f"w-{variant.name}-{mark[:6]}", tmp_path / variant.name)

    report = await run_test(test, make, ConsoleSink(test, tmp_path / "out", quiet=True))

    served, elsewhere = (s for s in report.steps if s.judgement.verdict is not Verdict.INVALID)
    assert served.judgement.verdict is Verdict.PASS, served.judgement.reasons
    assert elsewhere.judgement.verdict is Verdict.FAIL
    assert any("unexpected" in reason for reason in elsewhere.judgement.reasons), (
        elsewhere.judgement.reasons
    )
    assert marked_processes(mark) == []
