"""Window arithmetic over sampled counters: made-up samples, no clock, no files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plimsoll.metrics.samples import Limits, Sample, SampleBuffer, summarise
from plimsoll.metrics.source import Window

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
BASE = T0.timestamp()
LIMITS = Limits(cpu_cores=0.5, memory_bytes=1 << 30)


def steady(n: int, *, every: float = 0.25, cores: float = 0.5, mib: int = 100) -> list[Sample]:
    return [
        Sample(
            at=BASE + i * every,
            cpu_seconds=10 + i * every * cores,
            working_set_bytes=(mib << 20) + i * 1000,
            periods=i * 10,
            throttled=i * 4,
            oom_kills=0,
        )
        for i in range(n)
    ]


def window(start: float, end: float) -> Window:
    return Window(T0 + timedelta(seconds=start), T0 + timedelta(seconds=end))


def test_a_steady_group_reads_its_mean_peak_throttling_and_memory() -> None:
    usage = summarise(steady(41), window(1, 9), interval=0.25, source="cgroup", limits=LIMITS)
    assert usage.missing == []
    assert usage.cpu_mean_cores == pytest.approx(0.5)
    assert usage.cpu_peak_cores == pytest.approx(0.5)
    assert usage.throttled_ratio == pytest.approx(0.4)
    # Samples 1 s .. 9 s inclusive, with one interval of slack at each edge.
    assert usage.memory_max_bytes == (100 << 20) + 37 * 1000
    assert usage.memory_mean_bytes == (100 << 20) + 20 * 1000
    assert (usage.cpu_limit_cores, usage.memory_limit_bytes, usage.oom_kills) == (
        0.5,
        1 << 30,
        0,
    )


def test_a_burst_shows_in_the_peak_not_the_mean() -> None:
    samples = steady(9, every=1.0, cores=0.2)
    burst = [
        Sample(s.at, s.cpu_seconds + (0.8 if i >= 5 else 0), s.working_set_bytes, oom_kills=0)
        for i, s in enumerate(samples)
    ]
    usage = summarise(burst, window(0, 8), interval=1.0, source="cgroup", limits=Limits())
    assert usage.cpu_peak_cores == pytest.approx(1.0)
    assert usage.cpu_mean_cores == pytest.approx(0.3)
    assert usage.throttled_ratio is None  # no quota: not applicable, and not a failure
    assert usage.missing == []


def test_too_few_samples_are_missing_with_the_reason() -> None:
    usage = summarise(steady(2), window(5, 9), interval=0.25, source="cgroup", limits=LIMITS)
    assert usage.cpu_mean_cores is None
    assert usage.missing == [
        "cgroup: 0 sample(s) in the 4.0s window (sampling every 0.25s); was the sampler running?"
    ]


def test_a_stalled_sampler_leaves_a_gap_that_is_reported() -> None:
    samples = [s for s in steady(41) if not 12 <= (s.at - BASE) / 0.25 <= 24]
    usage = summarise(samples, window(1, 9), interval=0.25, source="cgroup", limits=LIMITS)
    assert usage.cpu_mean_cores is None
    assert usage.memory_max_bytes is None
    assert usage.missing == ["cgroup: a 3.5s gap between samples (sampling every 0.25s)"]


def test_samples_that_stop_early_do_not_cover_the_window() -> None:
    usage = summarise(steady(20), window(1, 9), interval=0.25, source="proc", limits=Limits())
    assert usage.missing == ["proc: no sample in the last 4.2s of the window"]


def test_oom_kills_are_counted_and_their_absence_is_said() -> None:
    samples = [Sample(BASE + i, i * 0.1, 1 << 20, oom_kills=1 if i > 2 else 0) for i in range(6)]
    assert summarise(samples, window(0, 5), interval=1, source="c", limits=Limits()).oom_kills == 1
    unknown = [Sample(BASE + i, i * 0.1, 1 << 20) for i in range(6)]
    usage = summarise(unknown, window(0, 5), interval=1, source="proc", limits=Limits())
    assert usage.missing == ["proc: the kernel does not report OOM kills for this group"]
    assert usage.cpu_mean_cores == pytest.approx(0.1)


def test_the_ring_buffer_keeps_the_latest() -> None:
    buffer = SampleBuffer(capacity=10)
    for s in steady(25, every=1.0):
        buffer.add(s)
    assert len(buffer) == 10
    assert buffer.between(BASE, BASE + 100)[0].at - BASE == 15.0


@pytest.mark.parametrize(
    ("waited_per_s", "throttled_per_s", "expected"),
    [
        (0.30, 0.0, 0.30),  # waited 0.3 s each second, never throttled: all the host's
        (0.30, 0.25, 0.05),  # 0.25 s of it was the quota's own throttling
        (0.10, 0.25, 0.0),  # more throttled than waited: nothing left, never negative
    ],
)
def test_cpu_wait_is_the_run_queue_wait_outside_throttling(
    waited_per_s: float, throttled_per_s: float, expected: float
) -> None:
    samples = [
        Sample(
            at=BASE + i * 0.25,
            cpu_seconds=i * 0.1,
            working_set_bytes=1 << 20,
            oom_kills=0,
            cpu_wait_seconds=i * 0.25 * waited_per_s,
            throttled_seconds=i * 0.25 * throttled_per_s,
            cpu_wait_source="schedstat",
        )
        for i in range(41)
    ]
    usage = summarise(samples, window(1, 9), interval=0.25, source="cgroup", limits=LIMITS)
    assert usage.cpu_wait_cores == pytest.approx(expected, abs=1e-9)
    assert usage.cpu_wait_source == "schedstat"


def test_without_schedstat_the_cpu_wait_is_none_and_nothing_is_missing() -> None:
    usage = summarise(steady(41), window(1, 9), interval=0.25, source="cgroup", limits=LIMITS)
    assert usage.cpu_wait_cores is None
    assert usage.missing == []


def test_the_stall_of_a_throttled_period_is_the_throttled_time_per_throttled_period() -> None:
    # 4 of every 10 periods throttled, the group standing still 0.12 s per 0.25 s sample:
    # 0.12 s over 4 throttled periods is 30 ms each.
    samples = [
        Sample(
            at=BASE + i * 0.25,
            cpu_seconds=i * 0.1,
            working_set_bytes=1 << 20,
            periods=i * 10,
            throttled=i * 4,
            oom_kills=0,
            throttled_seconds=i * 0.12,
        )
        for i in range(41)
    ]
    limits = Limits(cpu_cores=0.5, cfs_period_ms=100.0, memory_bytes=1 << 30)
    usage = summarise(samples, window(1, 9), interval=0.25, source="cgroup", limits=limits)
    assert usage.throttled_stall_ms == pytest.approx(30.0)
    assert usage.cfs_period_ms == 100.0
    # A source without the throttled time leaves it unknown, never zero.
    plain = summarise(steady(41), window(1, 9), interval=0.25, source="cgroup", limits=LIMITS)
    assert plain.throttled_stall_ms is None
