"""The truth benchmark's simulated server under a CFS quota: checked against cases whose
answer is known by hand."""

from __future__ import annotations

import pytest

from bench.cfs_sim import Server, _serve, ceiling, latencies_ms, passes, quantile


def test_work_beyond_the_quota_waits_for_the_next_period() -> None:
    half = Server(service_ms=2.0, cores=0.5)  # 50 ms of CPU per 100 ms period
    budget: dict[int, float] = {}
    assert _serve(half, 0.0, 30.0, budget) == pytest.approx(30.0)
    # 20 ms of quota left: 20 ms now, throttled until 100 ms, then the other 10 ms.
    assert _serve(half, 30.0, 30.0, budget) == pytest.approx(110.0)
    assert budget[1] == pytest.approx(40.0)
    # A whole core is never throttled by one thread.
    assert _serve(Server(2.0, 1.0), 0.0, 150.0, {}) == pytest.approx(150.0)


def test_a_light_load_passes_and_one_over_the_quota_fails() -> None:
    half = Server(service_ms=2.0, cores=0.5)
    settings = {"q": 0.99, "bound_ms": 50.0, "duration": 8.0, "warm_up": 2.0}
    assert passes(half, 50.0, **settings)
    assert not passes(half, 260.0, **settings)  # over 0.5 / 2 ms = 250/s
    light = latencies_ms(half, 20.0, 8.0, 2.0, seed=1)
    assert quantile(light, 0.5) == pytest.approx(2.0, abs=0.5)


def test_the_ceiling_lies_below_the_quotas_limit_and_about_doubles_at_one_cpu() -> None:
    settings = {"q": 0.99, "bound_ms": 50.0, "duration": 8.0, "warm_up": 2.0}
    half = ceiling(Server(2.0, 0.5), **settings)
    one = ceiling(Server(2.0, 1.0), **settings)
    assert 150 < half < 250
    assert 1.7 < one / half < 2.3
