"""The histogram helpers: `clear` is hdrh's `reset` at C speed, and leaves the same state."""

from __future__ import annotations

import random

from hdrh.histogram import HdrHistogram

from plimsoll.shared import histogram


def _state(h: HdrHistogram) -> tuple[object, ...]:
    fields = ("total_count", "min_value", "max_value")
    stamps = ("start_time_stamp_msec", "end_time_stamp_msec")
    return (list(h.counts), *(getattr(h, f) for f in (*fields, *stamps)))


def _filled(seed: int) -> HdrHistogram:
    h = histogram.new_histogram()
    rng = random.Random(seed)
    for _ in range(2_000):
        h.record_value(histogram.clamped_us(int(rng.lognormvariate(7, 2))))
    h.set_start_time_stamp(1_000)
    h.set_end_time_stamp(2_000)
    return h


def test_clear_leaves_the_state_reset_leaves() -> None:
    by_reset, by_clear = _filled(1), _filled(1)
    assert _state(by_reset) == _state(by_clear)
    by_reset.reset()
    histogram.clear(by_clear)
    assert _state(by_clear) == _state(by_reset)
    # A new histogram differs from a reset one only in its time stamps (0, not maxsize).
    assert _state(by_clear)[:4] == _state(histogram.new_histogram())[:4]


def test_a_cleared_histogram_records_and_encodes_as_a_fresh_one() -> None:
    cleared, fresh = _filled(2), histogram.new_histogram()
    histogram.clear(cleared)
    for h in (cleared, fresh):
        for value in (3, 250, 250, 90_000):
            h.record_value(value)
    assert histogram.decode(histogram.encode(cleared)).get_total_count() == 4
    assert histogram.quantile_ms(cleared, 0.99) == histogram.quantile_ms(fresh, 0.99)
    assert histogram.quantile_ms(cleared, 0.0) == histogram.quantile_ms(fresh, 0.0)
