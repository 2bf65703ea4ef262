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


def test_a_window_is_queried_once_at_its_end_over_its_whole_span() -> None:
    window = Window(T0 + timedelta(seconds=3), T0 + timedelta(seconds=123))
    p = promql.plan(window, 30)
    assert (p.interval, p.at, p.span) == (30, window.end.timestamp(), 120)


def test_a_window_shorter_than_three_scrapes_is_refused_with_the_minimum() -> None:
    window = Window(T0, T0 + timedelta(seconds=44.5))
    with pytest.raises(WindowTooShortError, match=r"needs at least 45s \(3 scrape intervals\)"):
        promql.plan(window, 15)
    assert promql.plan(Window(T0, T0 + timedelta(seconds=45)), 15).span == 45
    with pytest.raises(ValueError, match="positive"):
        promql.plan(window, 0)


def test_settle_moves_the_query_time_after_the_window() -> None:
    window = Window(T0, T0 + timedelta(seconds=30))
    assert promql.settle_until(window, 2) == T0 + timedelta(seconds=32)


def test_role_queries_are_the_exact_text_recorded() -> None:
    p = promql.plan(Window(T0, T0 + timedelta(seconds=90)), 15)
    q = promql.role_queries(Selector("run-1", "target-.*"), p)
    m = '{namespace="run-1",pod=~"target-.*",container!="",container!="POD"}'
    cpu = f"container_cpu_usage_seconds_total{m}"
    # The mean is the counters' increase across the window, whatever the interval.
    assert q.cpu == f"sum(increase({cpu}[90s])) / 90"
    assert q.cpu_peak == f"max_over_time(sum(irate({cpu}[45s]))[60s:15s])"
    assert q.memory_mean == f"sum(avg_over_time(container_memory_working_set_bytes{m}[90s]))"
    assert q.memory_max == f"sum(max_over_time(container_memory_working_set_bytes{m}[90s]))"
    assert q.throttled == (
        f"sum(increase(container_cpu_cfs_throttled_periods_total{m}[90s]))"
        f" / sum(increase(container_cpu_cfs_periods_total{m}[90s]))"
    )
    assert q.cpu_limit == (
        f"sum(max by (pod) (container_spec_cpu_quota{m} / container_spec_cpu_period{m}))"
    )
    assert q.memory_limit == f"max(container_spec_memory_limit_bytes{m} > 0)"
    restarts = f"kube_pod_container_status_restarts_total{m}"
    assert q.restarts == (f"sum((max_over_time({restarts}[90s]) - min_over_time({restarts}[90s])))")
    assert q.oom_kills.endswith(") or vector(0)")
    assert 'reason="OOMKilled"' in q.oom_kills


def test_a_fractional_window_is_written_in_milliseconds() -> None:
    p = promql.plan(Window(T0, T0 + timedelta(seconds=3.25)), 1)
    q = promql.role_queries(Selector("ns"), p)
    assert q.cpu.endswith("[3250ms])) / 3.25")
    assert "[1250ms:1s]" in q.cpu_peak


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
