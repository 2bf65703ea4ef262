"""The guided shape search for real, in one local run: a CPU-bound target pinned by cgroups.

`examples/targets/cpu_bound.py` burns WORK_MS of its own CPU per request on one core, so
pinned to 250m it serves at most 12.5 requests/s and to 500m 25. The search starts at
250m / 128Mi; CPU limits it with memory to spare and memory cannot shrink below the
grid's one size, so the next shape is 500m / 128Mi, searched from its predicted ceiling;
there the grid ends and the search stops, bracketed. About half a minute (END_TO_END).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plimsoll.api.step import LimitedBy
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.report.files import write_report
from plimsoll.report.live import ConsoleSink
from plimsoll.run.runner import run_test
from tests.localrun import one_level_test

pytestmark = pytest.mark.usefixtures("mark")


async def test_a_cpu_bound_target_is_given_more_cpu_and_the_cheapest_is_named(
    tmp_path: Path, mark: str
) -> None:
    test = one_level_test(
        "shapes",
        {
            "command": ["python", "examples/targets/cpu_bound.py"],
            "env": {"WORK_MS": "20"},
            "resources": {"cpu": "250m", "memory": "128Mi"},
        },
        search={"strategy": "doubling", "start": 4, "precision": "25%", "repeats": 0},
        passWhen={"minAchieved": "90%", "latency": [{"quantile": "p99", "below": "400ms"}]},
        generators={"replicas": 1, "processes": 1},
        shapes={
            "search": {
                "cpu": {"min": "250m", "max": "500m"},
                "memory": {"min": "128Mi", "max": "128Mi"},
                "steps": 2,
                "maxShapes": 3,
            }
        },
    )

    def make(variant: Any) -> LocalPlatform:
        return LocalPlatform(f"s-{variant.name}-{mark[:6]}", tmp_path / variant.name)

    out = tmp_path / "out"
    report = await run_test(test, make, ConsoleSink(test, out, quiet=True))
    write_report(report, out)

    table = report.shapes
    assert table is not None
    assert table.guided
    assert [c.variant for c in report.ceilings] == [r.name for r in table.rows]
    first = table.rows[0]
    assert first.name == "c250m-m128mi"
    assert first.predicted is None
    assert first.ceiling is not None
    assert first.cost_per_thousand is not None
    assert first.limited_by is LimitedBy.CPU, report.ceilings[0]
    second = table.rows[1]
    assert second.name == "c500m-m128mi"
    assert second.predicted is not None
    assert second.predicted > first.ceiling
    assert "bracketed" in table.stop_reason
    # 250m and 500m price within 3% per request at their analytic ceilings (12.5, 25):
    # either may be cheapest as measured, but the one named must be the lower-priced row.
    priced = [r for r in table.rows if r.cost_per_thousand is not None]
    assert table.cheapest == min(priced, key=lambda r: r.cost_per_thousand or 0.0).name
    assert table.headline.endswith(".")
    assert "is the cheapest shape" in table.headline
    assert table.headline in (out / "report.md").read_text()
