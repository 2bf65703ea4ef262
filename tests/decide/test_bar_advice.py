"""A bar without a latency bound is warned about (`decide.bar_advice`)."""

from __future__ import annotations

from plimsoll.api.spec import LatencyBound, PassWhen, PromQLBound
from plimsoll.decide.bar_advice import bar_warnings


def test_no_latency_bound_is_warned_about_with_an_example() -> None:
    [warning] = bar_warnings(PassWhen())
    assert warning.startswith("passWhen: no latency bound, so a level passes however slow")
    assert "latency: [{quantile: p99, below: 500ms}]" in warning


def test_a_latency_or_promql_bound_is_a_bar() -> None:
    assert bar_warnings(PassWhen(latency=[LatencyBound(quantile=0.99, below=0.5)])) == []
    promql = PromQLBound(name="q", query='sum(up{namespace="$namespace"})', below=1)
    assert bar_warnings(PassWhen(promql=[promql])) == []
