"""bench/shapes.py's simulated half, held to issue 27's bars: the guided shape search
takes at most 60% of the trials that independent searches of the same shapes take, and
names the shape that is cheapest at the analytic capacities, for a CPU-bound and a
memory-bound target, with and without simulated host noise. No clock: under a second."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# bench/shapes.py imports its neighbours (real_shapes, simulated_targets) by their own names.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench.shapes import MODELS, bench

GUIDED_SHARE = 0.60


@pytest.mark.parametrize("noise", [False, True], ids=["quiet", "noisy"])
def test_the_guided_search_saves_trials_and_finds_the_cheapest(noise: bool) -> None:
    results = {model.name: bench(model, noise) for model in MODELS}
    guided = sum(int(str(r["guided"])) for r in results.values())
    independent = sum(int(str(r["independent"])) for r in results.values())
    assert guided <= GUIDED_SHARE * independent, (guided, independent)
    for name, result in results.items():
        assert result["correct"], (name, result)
        assert result["within_10pct"], (name, result)
    # The right shape for the workload: more CPU for the CPU-bound target, more memory
    # per core for the memory-bound one (both start from 1 CPU / 512Mi).
    assert results["cpu-bound"]["cheapest"] == "4 CPU / 512Mi"
    assert results["memory-bound"]["cheapest"] == "500m CPU / 2Gi"
