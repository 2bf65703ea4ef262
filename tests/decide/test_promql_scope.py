"""Which user PromQL stays in the run's namespace: decided by parsing, not by substring."""

from __future__ import annotations

import pytest

from plimsoll.decide.promql_scope import MAX_QUERY_CHARS, scope_problem

SCOPED = [
    'sum(x{namespace="$namespace"})',
    'sum(rate(pg_stat_database_xact_commit{namespace="$namespace",datname="gateway"}[$window]))',
    'sum(rate(redis_commands_total{namespace="$namespace",cmd!~"info|(config)[|].*"}[$window]))',
    'sum(a{namespace="$namespace"}) / sum(b{namespace="$namespace"})',
    'max_over_time(x{namespace="$namespace"}[$window:30s])',
    'x{namespace="$namespace" or namespace="$namespace", job="a"}',
    'label_replace(x{namespace="$namespace", pod="#1"}, "a", "$1", "b", "(.*)")',
    'x{namespace="$namespace", label=`raw # not a comment`}',
]

# Each read other namespaces' series (or could) and passed the substring test before.
ESCAPES = [
    ("sum(kube_secret_info) # $namespace", "comment"),
    ('sum(kube_secret_info{namespace!="$namespace"})', "namespace only as"),
    ('sum(x{namespace=~"$namespace|kube-system"})', "namespace only as"),
    ('sum(x{namespace=~"$namespace"})', "namespace only as"),
    ('sum(x{namespace="$namespace", namespace!="z"})', "namespace only as"),
    ('sum(x{pod="$namespace"})', "selector has no namespace"),
    ('sum(x{namespace="$namespace"}) + sum(kube_secret_info)', "selector has no namespace"),
    ('x{namespace="$namespace" or job="a"}', "selector has no namespace"),
    ('quantile(scalar(secret_total), x{namespace="$namespace"})', "selector has no namespace"),
    ('x{namespace="$namespace-other"}', "namespace only as"),
    ('x{namespace="$namespace"} and on() kube_secret_info offset 5m', "selector has no namespace"),
    ('{__name__=~".+", job="$namespace"}', "selector has no namespace"),
    ("vector(1)", "selects no series"),
    ('sum(x{namespace="$namespace"}', "not valid PromQL"),
    ('x{namespace="$namespace"}\n# $namespace', "comment"),
]


@pytest.mark.parametrize("query", SCOPED)
def test_queries_scoped_to_the_run_pass(query: str) -> None:
    assert scope_problem(query) is None


@pytest.mark.parametrize(("query", "reason"), ESCAPES)
def test_queries_that_reach_other_namespaces_are_refused(query: str, reason: str) -> None:
    problem = scope_problem(query)
    assert problem is not None
    assert reason in problem


def test_a_query_that_would_crash_the_parser_is_refused_before_parsing() -> None:
    # 10,000 brackets overflow the native parser's stack: the process would die.
    deep = "(" * 10_000 + 'x{namespace="$namespace"}' + ")" * 10_000
    problem = scope_problem(deep)
    assert problem is not None
    assert f"at most {MAX_QUERY_CHARS}" in problem


def test_a_long_chain_within_the_cap_is_walked() -> None:
    chain = " + ".join(['x{namespace="$namespace"}'] * 30)
    assert len(chain) < MAX_QUERY_CHARS
    assert scope_problem(chain) is None
    assert scope_problem(chain + " + secret_total") is not None
