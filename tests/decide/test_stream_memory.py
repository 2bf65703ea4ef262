"""Memory per held stream: the slope over stream counts, and what fits under the limit."""

from __future__ import annotations

import pytest

from plimsoll.decide.stream_memory import StreamMemoryError, memory_per_stream, stream_counts

MIB, KIB = 1 << 20, 1 << 10


def test_the_slope_leaves_the_fixed_baseline_out() -> None:
    # 40 MiB the target holds anyway, plus 72 KiB a stream (the edge seed's figure).
    points = [(n, 40 * MIB + n * 72 * KIB) for n in (500, 1000, 2000)]
    cost = memory_per_stream(points, variant="edge", baseline=39 * MIB, limit=1024 * MIB)
    assert cost.bytes_per_stream == pytest.approx(72 * KIB)
    assert cost.counts == [500, 1000, 2000]
    assert cost.memory_bytes == [40 * MIB + n * 72 * KIB for n in (500, 1000, 2000)]
    assert (cost.variant, cost.baseline_bytes, cost.limit_bytes) == ("edge", 39 * MIB, 1 << 30)
    # (1024 - 40) MiB ÷ 72 KiB = 13,994.6: whole streams only.
    assert cost.fit_under_limit == 13_994
    assert cost.basis == (
        "slope of the working set over streams held (75.2 MiB with 500, 110.3 MiB with "
        "1,000, 180.6 MiB with 2,000); ≈ 13,994 streams fit under the 1,024.0 MiB limit"
    )
    # Dividing by the count instead would charge the baseline to the streams.
    assert points[-1][1] / 2000 > 1.25 * cost.bytes_per_stream


def test_a_noisy_reading_is_averaged_by_the_fit() -> None:
    points = [(100, 10 * MIB + 100 * 64 * KIB + 300 * KIB), (200, 10 * MIB + 200 * 64 * KIB)]
    points.append((300, 10 * MIB + 300 * 64 * KIB + 100 * KIB))
    cost = memory_per_stream(points)
    assert cost.bytes_per_stream == pytest.approx(63 * KIB, rel=0.01)
    assert cost.fit_under_limit is None  # no limit given


def test_no_growth_projects_nothing() -> None:
    cost = memory_per_stream([(10, 5 * MIB), (20, 5 * MIB)], limit=64 * MIB)
    assert cost.bytes_per_stream == 0
    assert cost.fit_under_limit is None
    assert cost.basis.endswith("no growth measured, so no projection")


def test_one_count_is_not_a_slope() -> None:
    with pytest.raises(StreamMemoryError, match="two or more stream counts"):
        memory_per_stream([(100, 1.0), (100, 2.0)])


def test_counts_rise_to_the_probes_count() -> None:
    assert stream_counts(2000) == [667, 1333, 2000]
    assert stream_counts(300) == [100, 200, 300]
    assert stream_counts(2) == [1, 2]
    with pytest.raises(StreamMemoryError, match=r"workload.streams.count is 1"):
        stream_counts(1)
