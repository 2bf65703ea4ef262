"""Right-sizing for real: three shapes each of a CPU-bound and a memory-bound target.

`bench/real_shapes.py` derives each target's analytic capacity per shape from its
settings (parallel_cpu.py: cores / 20 ms per request, on threads that run in
parallel; memory_hold.py: (limit - idle) / (4 MiB held for 2 s)).
`plimsoll run` measures the three shapes of each spec in tests/e2e/specs/ with the
target pinned by cgroups; every ceiling must lie within 10% of its analytic
capacity, be limited by the resource the target spends, and the shape the report
names cheapest must be the one that is cheapest at the analytic capacities. About
three minutes each: `make truth` (tests/conftest.py TRUTH), on a quiet host.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.real_shapes import SPECS, judge, run_spec, spec_of
from tests.localrun import marked_processes

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("mark")]


def print_trials(report: dict[str, Any]) -> None:
    """Each trial's verdict beside the figures that explain it, for a failure's log."""
    for step in report["steps"]:
        target, contention = step["target"], step["contention"]
        print(
            f"{step['variant']} at {step['level']}: {step['judgement']['verdict']}"
            f" {step['judgement']['reasons']}; memory peak"
            f" {target['memoryMaxBytes'] / 2**20:.0f} MiB, CPU {target['cpuMeanCores']:.3f}"
            f" cores (throttled in {target['throttledRatio']:.0%} of periods), start lag p99"
            f" {contention['startLagP99Ms']} ms, busy {contention['busy']}"
        )


@pytest.mark.parametrize(
    ("target", "limit", "cheapest"),
    [("cpu-bound", "cpu", "c1-m512mi"), ("memory-bound", "memory", "c1-m512mi")],
)
def test_each_shape_is_near_its_analytic_ceiling_and_the_cheapest_is_right(
    tmp_path: Path, mark: str, target: str, limit: str, cheapest: str, record_property: Any
) -> None:
    spec = spec_of(target)
    report = run_spec(SPECS[target], tmp_path / "out")
    assert report["outcome"] == "succeeded", report["message"]
    judged = judge(spec, report)
    print_trials(report)
    for row in judged.rows:
        print(f"{row.label}: analytic {row.analytic:.1f}, found {row.found}, error {row.error}")
        record_property(f"{row.label}_truth", round(row.analytic, 1))
        record_property(f"{row.label}_found", row.found)
        record_property(f"{row.label}_limited_by", row.limited_by)
    record_property("cheapest_found", judged.cheapest_found)
    assert len(judged.rows) == 3
    for row in judged.rows:
        assert row.within, row
        assert row.limited_by == limit, row
    assert judged.cheapest_analytic == cheapest  # the spec's comment says why
    assert judged.cheapest_found == cheapest
    assert marked_processes(mark) == []
