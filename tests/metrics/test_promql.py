"""The PromQL builders and the window arithmetic: pure, no server, no clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plimsoll.api.spec import ExtraMetric
from plimsoll.metrics import promql
from plimsoll.metrics.promql import Selector, WindowTooShortError
from plimsoll.metrics.source import Window

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def test_durations_are_whole_seconds_where_exact() -> None:
    assert promql.duration(60) == "60s"
    assert promql.duration(4.0) == "4s"
    assert promql.duration(7.25) == "7250ms"
    with pytest.raises(ValueError, match="positive"):
        promql.duration(0)


def test_selector_excludes_the_pod_cgroup_and_pause_container() -> None:
    assert Selector("run-1", "target-.*").matchers() == (
        '{namespace="run-1",pod=~"target-.*",container!="",container!="POD"}'
    )
    assert Selector("ns", container="app").matchers('reason="OOMKilled"') == (
        '{namespace="ns",pod=~".+",container="app",reason="OOMKilled"}'
    )
    assert Selector('we"ird', "a\\d").matchers().startswith('{namespace="we\\"ird",pod=~"a\\\\d"')


def test_rate_points_start_one_rate_range_in_and_sit_on_the_step() -> None:
    base = T0.timestamp()
    p = promql.plan(Window(T0 + timedelta(seconds=3), T0 + timedelta(seconds=123)), 15)
    assert p.step == 15
    assert p.rate_range == 60  # four scrapes
    # A rate at t sees (t - 60s, t]: the first point seeing only the window is 63 s in,
    # moved up to the next multiple of the step; the last is on or before the end.
    assert p.rate_points == tuple(base + s for s in (75, 90, 105, 120))
    assert p.gauge_points == tuple(base + 15 * k for k in range(1, 9))
    assert p.at == base + 123
    assert p.span == 120


def test_one_second_scrapes_give_one_point_a_second() -> None:
    base = T0.timestamp()
    p = promql.plan(Window(T0 + timedelta(seconds=0.3), T0 + timedelta(seconds=8.3)), 1)
    assert p.rate_range == 4
    assert p.rate_points == tuple(base + s for s in (5, 6, 7, 8))
    assert len(p.gauge_points) == 8


def test_a_window_shorter_than_a_rate_range_is_refused_with_the_minimum() -> None:
    window = Window(T0 + timedelta(seconds=0.2), T0 + timedelta(seconds=4.7))
    with pytest.raises(WindowTooShortError, match=r"needs at least 5s \(the rate range 4s"):
        promql.plan(window, 1)
    with pytest.raises(ValueError, match="positive"):
        promql.plan(window, 0)


def test_settle_moves_the_query_time_after_the_window() -> None:
    window = Window(T0, T0 + timedelta(seconds=30))
    assert promql.settle_until(window, 2) == T0 + timedelta(seconds=32)


def test_role_queries_are_the_exact_text_recorded() -> None:
    p = promql.plan(Window(T0, T0 + timedelta(seconds=90)), 15)
    q = promql.role_queries(Selector("run-1", "target-.*"), p)
    m = '{namespace="run-1",pod=~"target-.*",container!="",container!="POD"}'
    assert q.cpu == f"sum(rate(container_cpu_usage_seconds_total{m}[60s]))"
    assert q.memory == f"sum(container_memory_working_set_bytes{m})"
    assert q.throttled == (
        f"sum(increase(container_cpu_cfs_throttled_periods_total{m}[90s]))"
        f" / sum(increase(container_cpu_cfs_periods_total{m}[90s]))"
    )
    assert q.cpu_limit == f"max(container_spec_cpu_quota{m} / container_spec_cpu_period{m})"
    assert q.memory_limit == f"max(container_spec_memory_limit_bytes{m} > 0)"
    restarts = f"kube_pod_container_status_restarts_total{m}"
    assert q.restarts == (f"sum((max_over_time({restarts}[90s]) - min_over_time({restarts}[90s])))")
    assert q.oom_kills.endswith(") or vector(0)")
    assert 'reason="OOMKilled"' in q.oom_kills


def test_user_queries_get_the_namespace_and_window() -> None:
    window = Window(T0, T0 + timedelta(seconds=45))
    query = 'sum(increase(store_calls_total{namespace="$namespace"}[$window]))'
    assert promql.substitute(query, "run-7", window) == (
        'sum(increase(store_calls_total{namespace="run-7"}[45s]))'
    )


def test_per_unit_divides_by_the_level_when_asked() -> None:
    calls = ExtraMetric(name="calls", query="x", per="request")
    raw = ExtraMetric(name="bytes", query="x")
    assert promql.per_unit(300.0, calls, 100) == 3.0
    assert promql.per_unit(300.0, raw, 100) == 300.0
    with pytest.raises(ValueError, match="level must be > 0"):
        promql.per_unit(1.0, calls, 0)


def test_memory_per_stream_is_the_growth_over_the_streams() -> None:
    # The gateway seed: ~40 KB per held stream.
    assert promql.memory_per_stream(100_000_000, 140_000_000, 1000) == 40_000.0
    with pytest.raises(ValueError, match="at least one stream"):
        promql.memory_per_stream(1, 2, 0)
