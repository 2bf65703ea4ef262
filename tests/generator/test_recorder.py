"""The recorder's folds: each operation's histogram and the timeline slice's shared one
hold exactly the samples recorded, however the fold gets them there."""

from __future__ import annotations

import random

from plimsoll.shared import histogram
from plimsoll_generator.recorder import Recorder


def test_every_operation_and_the_slice_hold_exactly_their_samples() -> None:
    recorder = Recorder(["get", "put"])
    rng = random.Random(5)
    expected = {name: histogram.new_histogram() for name in ("get", "put")}
    in_slice = histogram.new_histogram()
    for fold in range(3):
        for _ in range(3_000):
            name = rng.choice(("get", "put"))
            seconds = rng.lognormvariate(-7, 1.2)
            recorder.op(name).latency.add(seconds)
            histogram.record_seconds(expected[name], seconds)
            if fold == 2:
                histogram.record_seconds(in_slice, seconds)
        if fold < 2:
            recorder.fold()
            histogram.clear(recorder.slice_latency)  # a timeline cut between folds
    recorder.fold()
    for name, stats in recorder.ops.items():
        assert stats.latency.encoded() == histogram.encode(expected[name]), name
    assert histogram.encode(recorder.slice_latency) == histogram.encode(in_slice)
    assert recorder.slice_latency.get_total_count() == in_slice.get_total_count()
