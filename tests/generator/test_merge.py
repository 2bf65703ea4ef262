"""Histograms recorded in two processes merge into exactly the histogram of all samples."""

from __future__ import annotations

import json
import random
import subprocess
import sys

from plimsoll.api.trial import OperationResult, TrialResult, TrialState
from plimsoll.shared import histogram
from plimsoll.shared.results import merge_results
from plimsoll_generator.recorder import Series


def _record(samples: list[float]) -> str:
    series = Series()
    for seconds in samples:
        series.add(seconds)
    return series.encoded()


def test_two_processes_merge_to_one_histogram_of_all_samples() -> None:
    rng = random.Random(3)
    samples = [rng.lognormvariate(-6, 1.5) for _ in range(150_000)]
    halves = [samples[::2], samples[1::2]]
    # Each half is recorded by its own Python process, as two workers would.
    script = (
        "import json, sys; from tests.generator.test_merge import _record; "
        "print(_record(json.load(sys.stdin)))"
    )
    encoded = [
        subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps(half),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for half in halves
    ]
    results = [
        TrialResult(
            id="t",
            state=TrialState.DONE,
            level=1,
            operations={"op": OperationResult(latency=part)},
        )
        for part in encoded
    ]
    merged = histogram.decode(merge_results(results, "t").operations["op"].latency)
    whole = histogram.decode(_record(samples))
    assert histogram.count(merged) == len(samples)
    for q in (0.5, 0.9, 0.99, 0.999, 1.0):
        assert histogram.quantile_ms(merged, q) == histogram.quantile_ms(whole, q)
    assert merged.get_mean_value() == whole.get_mean_value()
