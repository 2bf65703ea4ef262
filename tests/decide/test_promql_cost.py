"""What a scoped query may cost Prometheus: ranges and subquery evaluations bounded, checked
in the same walk as the scope (`scope_problem`), so every entry point refuses them."""

from __future__ import annotations

import pytest

from plimsoll.decide.promql_cost import MAX_EVALUATIONS
from plimsoll.decide.promql_scope import scope_problem

X = 'x{namespace="$namespace"}'

WITHIN = [
    f"rate({X}[$window])",
    f"rate({X}[5m])",
    f"max_over_time(rate({X}[1m])[24h:10s])",  # 8,640 evaluations
    f"max_over_time({X}[$window:1s])",  # the window stands in as 1m: 60
    f"max_over_time(max_over_time(rate({X}[1m])[10m:1m])[1h:1m])",  # 10 × 60
    f"max_over_time({X}[2h:])",  # no step: Prometheus' default minute, 120
]

TOO_MUCH = [
    (f"sum(rate({X}[365d]))", "a range of 365d; at most 1d"),
    (f"max_over_time(rate({X}[1m])[30d:1s])", "a range of 30d"),
    (f"max_over_time(rate({X}[1m])[12h:1s])", "43,200 times"),
    (f"max_over_time(max_over_time({X}[1h:1s])[1h:1s])", "12,960,000 times"),
    (f"max_over_time({X}[$window:1ms])", "60,000 times"),
    (f"max_over_time(rate({X}[1m])[2d:1h])", "a range of 2d"),
]


@pytest.mark.parametrize("query", WITHIN)
def test_ranges_and_subqueries_within_the_bounds_pass(query: str) -> None:
    assert scope_problem(query) is None


@pytest.mark.parametrize(("query", "words"), TOO_MUCH)
def test_too_long_a_range_or_too_many_evaluations_is_refused(query: str, words: str) -> None:
    problem = scope_problem(query)
    assert problem is not None
    assert words in problem, problem


def test_the_bound_is_prometheus_own_cap_on_a_range_query() -> None:
    at_cap = f"max_over_time({X}[{MAX_EVALUATIONS}s:1s])"
    over = f"max_over_time({X}[{MAX_EVALUATIONS + 1}s:1s])"
    assert scope_problem(at_cap) is None
    problem = scope_problem(over)
    assert problem is not None
    assert f"{MAX_EVALUATIONS + 1:,} times" in problem
