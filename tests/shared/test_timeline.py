"""Timelines merge exactly across processes, coarsen on their slices' grid, stay bounded."""

from __future__ import annotations

import random

from plimsoll.api.timeline import TimelineSlice
from plimsoll.shared import histogram
from plimsoll.shared.timeline import bounded, coarsen, merge_timelines, points


def _slice(start: float, seconds: float, samples: list[float], errors: int = 0) -> TimelineSlice:
    recorded = histogram.new_histogram()
    for value in samples:
        histogram.record_seconds(recorded, value)
    return TimelineSlice(
        start=start,
        seconds=seconds,
        latency=histogram.encode(recorded) if samples else None,
        sent=len(samples) + errors,
        ok=len(samples),
        errors=errors,
    )


def _samples(rng: random.Random, n: int) -> list[float]:
    return [rng.lognormvariate(-6, 1) for _ in range(n)]


def test_two_processes_merge_slice_by_slice_exactly() -> None:
    rng = random.Random(7)
    parts = [[_samples(rng, 500) for _ in range(4)] for _ in range(2)]
    timelines = [[_slice(k, 1.0, part[k]) for k in range(4)] for part in parts]
    merged = merge_timelines(timelines)
    assert [s.start for s in merged] == [0, 1, 2, 3]
    for k, item in enumerate(merged):
        assert item.latency is not None
        both = histogram.decode(item.latency)
        alone = histogram.decode(_slice(k, 1.0, parts[0][k] + parts[1][k]).latency or "")
        assert histogram.count(both) == 1000
        for quantile in (0.5, 0.99, 1.0):
            assert histogram.quantile_ms(both, quantile) == histogram.quantile_ms(alone, quantile)
        assert item.ok == 1000
        assert item.sent == 1000


def test_a_finer_timeline_is_coarsened_to_the_wider_before_adding() -> None:
    fine = [_slice(0.5 * k, 0.5, [0.001] * (k + 1)) for k in range(4)]  # 1, 2, 3, 4 samples
    wide = [_slice(0.0, 1.0, [0.002] * 10), _slice(1.0, 1.0, [0.002] * 20)]
    merged = merge_timelines([fine, wide])
    assert [(s.start, s.seconds, s.ok) for s in merged] == [(0.0, 1.0, 13), (1.0, 1.0, 27)]


def test_uneven_float_widths_group_on_their_grid() -> None:
    slices = [_slice(round(0.3 * k, 10), 0.3, [0.001]) for k in range(8)]
    wider = coarsen(slices, 0.6)
    assert [s.ok for s in wider] == [2, 2, 2, 2]
    assert [round(s.start, 6) for s in wider] == [0.0, 0.6, 1.2, 1.8]


def test_a_long_timeline_is_bounded_by_merging_neighbours() -> None:
    slices = [_slice(float(k), 1.0, [0.001], errors=1) for k in range(1000)]
    kept = bounded(slices, limit=120)
    assert len(kept) <= 120
    # 1000 s in 63 slices of 16 s, the last cut short at the trial's end.
    assert [s.seconds for s in kept] == [16.0] * 62 + [8.0]
    assert sum(s.ok for s in kept) == 1000
    assert sum(s.errors for s in kept) == 1000


def test_points_give_quantiles_rates_and_errors() -> None:
    series = points([_slice(0.0, 2.0, [0.001] * 99 + [0.050], errors=3), _slice(2.0, 2.0, [])])
    assert series[0].p50_ms is not None
    assert abs(series[0].p50_ms - 1.0) < 0.01
    assert series[0].p99_ms is not None
    assert abs(series[0].p99_ms - 1.0) < 0.01
    assert series[0].rate == 103 / 2
    assert series[0].errors == 3
    assert series[1].p99_ms is None
    assert series[1].rate == 0
