"""What a user's PromQL may cost the operator's Prometheus: bounded ranges and subqueries.

A query scoped to the run's namespace (`plimsoll.decide.promql_scope`) can still ask for
a year of samples (`x{...}[365d]`) or make Prometheus evaluate its inner expression
millions of times (`max_over_time(rate(x{...}[1m])[30d:1s])`, 2.6 million steps; nested
subqueries multiply). The operator runs these queries after every trial, against a
Prometheus that other teams share, so one tenant's query could slow everyone's. Each
range is held to `MAX_RANGE`, and the evaluations a subquery asks for (its range over
its step, multiplied through nested subqueries) to `MAX_EVALUATIONS`: the cap
Prometheus itself puts on the points of one range query. A trial's own window is
`$window`; it is the operator's to bound, not counted here. Pure: no I/O.
"""

from __future__ import annotations

from datetime import timedelta

import promql_parser

MAX_RANGE = timedelta(hours=24)
MAX_EVALUATIONS = 11_000
# A subquery without a step is evaluated at Prometheus' global evaluation interval,
# which the operator cannot see; its default is one minute.
DEFAULT_STEP = timedelta(minutes=1)


def _words(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def evaluations(subquery: promql_parser.SubqueryExpr) -> int:
    """How many times Prometheus evaluates the subquery's inner expression, at least once."""
    span = subquery.range or timedelta(0)
    step = subquery.step or DEFAULT_STEP
    if step <= timedelta(0):
        return max(int(span.total_seconds()), 1)  # no step: read as one a second
    return max(int(span / step), 1)


def cost_problem(node: promql_parser.Expr, outer_evaluations: int) -> str | None:
    """Why `node`, evaluated `outer_evaluations` times by the subqueries around it, asks
    too much of Prometheus; None when it does not."""
    span: timedelta | None = None
    if isinstance(node, promql_parser.MatrixSelector | promql_parser.SubqueryExpr):
        span = node.range
    if span is not None and span > MAX_RANGE:
        return (
            f"reads a range of {_words(span)}; at most {_words(MAX_RANGE)} is allowed "
            "(use [$window] for the trial's own window)"
        )
    if isinstance(node, promql_parser.SubqueryExpr):
        total = outer_evaluations * evaluations(node)
        if total > MAX_EVALUATIONS:
            return (
                f"makes Prometheus evaluate a subquery {total:,} times; at most "
                f"{MAX_EVALUATIONS:,} are allowed: a longer step or a shorter range"
            )
    return None


def inner_evaluations(node: promql_parser.Expr, outer_evaluations: int) -> int:
    """The evaluations `node`'s children get: a subquery multiplies them."""
    if isinstance(node, promql_parser.SubqueryExpr):
        return outer_evaluations * evaluations(node)
    return outer_evaluations
