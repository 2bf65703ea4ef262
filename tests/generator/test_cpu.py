from __future__ import annotations

import asyncio
import time

import pytest

from plimsoll_generator.cpu import CpuMeter, host_cpu_ticks, peak_fraction


def test_peak_is_the_busiest_window() -> None:
    # 10 s of samples: idle, then 5 s at 90% of a core.
    samples = [(float(t), 0.0) for t in range(6)]
    cpu = 0.0
    for t in range(6, 11):
        cpu += 0.9
        samples.append((float(t), cpu))
    assert peak_fraction(samples, 5.0) == pytest.approx(0.9)


def test_a_short_run_reports_its_average() -> None:
    assert peak_fraction([(0.0, 0.0), (2.0, 1.0)], 5.0) == pytest.approx(0.5)
    assert peak_fraction([(0.0, 0.0)], 5.0) == 0.0


def test_the_host_ticks_are_this_machines_own_and_steal_is_a_share_of_them() -> None:
    first = host_cpu_ticks()
    assert first is not None  # Linux: /proc/stat has a steal column since 2.6.11
    steal, total = first
    assert 0 <= steal <= total
    busy_until = time.perf_counter() + 0.05
    while time.perf_counter() < busy_until:
        pass  # at least a few ticks pass on this CPU
    later = host_cpu_ticks()
    assert later is not None
    assert later[1] > total
    assert later[0] >= steal


async def test_the_meter_reports_the_windows_steal_share() -> None:
    meter = CpuMeter()
    meter.start()
    await asyncio.sleep(0.1)
    await meter.stop()
    share = meter.steal_share
    assert share is not None
    assert 0.0 <= share <= 1.0
    meter._host = [(100, 10_000), (350, 11_000)]  # 250 of 1,000 ticks stolen
    assert meter.steal_share == pytest.approx(0.25)
    meter._host = [(100, 10_000), None]
    assert meter.steal_share is None
