"""Variants compared for real: the table, the Δ and the noise rule on a CPU-bound target.

`examples/targets/cpu_bound.py` burns WORK_MS of CPU per request; pinned to 0.25
CPU it serves at most 0.25 / (WORK_MS / 1000) requests/s: 50 at 5 ms, 25 at
10 ms (less when the machine is busy: the bands, not the figures, are asserted).
A small quota is what a busy shared machine still grants in full. The doubling
search bisects to 25%, so a band is at most 25% wide: identical variants' bands
touch (a level one failed, the other passed) or overlap, and a variant at twice
the cost lands a factor two below, clear of the baseline. About a minute: three
variants of some seven one-second trials each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.comparison import Difference
from plimsoll.api.report import Outcome
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
            "command": ["python", "examples/targets/cpu_bound.py"],
            "env": {"WORK_MS": "5"},
            "resources": {"cpu": "0.25", "memory": "128Mi"},
        },
        trial={"duration": "1s", "warmUp": "0.3s"},
        search={"strategy": "doubling", "start": 10, "precision": "25%", "repeats": 1},
        passWhen={"minAchieved": "90%", "latency": [{"quantile": "p99", "below": "300ms"}]},
        generators={"replicas": 1, "processes": 1},
        variants=[
            {"name": "base"},
            {"name": "same", "description": "the baseline again"},
            {"name": "double", "env": {"WORK_MS": "10"}},
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
    # Figures are compared at the highest level all three passed: the heavy variant
    # used about twice the CPU per request there.
    assert comparison.common_level is not None
    assert base.at_common_level is not None
    assert double.at_common_level is not None
    assert base.at_common_level.cpu_cores is not None
    assert double.at_common_level.cpu_cores is not None
    assert double.at_common_level.cpu_cores > 1.4 * base.at_common_level.cpu_cores

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
