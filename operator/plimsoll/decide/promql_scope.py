"""Whether a user's PromQL query reads only the run's own series: decided by parsing it.

`plimsoll.decide.metrics_policy` asks this for every `metrics.extra` and
`passWhen.promql` query before the operator creates anything. A substring test
("contains `$namespace`") is no boundary: `sum(kube_secret_info) # $namespace` hides
the placeholder in a comment, and `{namespace!="$namespace"}` reads every other
namespace. So the query is parsed with `promql-parser` (the Rust port of Prometheus's
own parser, typed, no dependencies) and every vector selector, in every `or` group,
must carry exactly `namespace="$namespace"`, and no other matcher on `namespace`.
Comments are refused outright: Prometheus ignores them, so they can only mislead a
reader. Pure: no I/O.

The parser is a native extension: nesting a few thousand brackets deep overflows its
stack (the process dies, no exception), and its own `walk` takes seconds on a chain of
a few hundred operators. So a query is at most `MAX_QUERY_CHARS` long before it is
parsed, and the tree is walked here with an explicit stack; a node kind this walk
does not know is refused rather than skipped. The same walk holds each range and
subquery to what Prometheus may be asked (`plimsoll.decide.promql_cost`).
"""

from __future__ import annotations

import promql_parser

from plimsoll.api.bounded import MAX_PROMQL_CHARS
from plimsoll.decide.promql_cost import cost_problem, inner_evaluations

NAMESPACE_PLACEHOLDER = "$namespace"
WINDOW_PLACEHOLDER = "$window"
# `$window` stands where a duration goes (`[$window]`); the parser wants a real one.
_WINDOW_STAND_IN = "1m"
# The model caps every query (`plimsoll.api.bounded`, so `plimsoll validate` refuses a
# longer one too); this module, callable with any text, holds the same line before parsing.
MAX_QUERY_CHARS = MAX_PROMQL_CHARS
_EXAMPLE = 'e.g. sum(rate(my_metric{namespace="$namespace"}[$window]))'


def _has_comment(query: str) -> bool:
    """A `#` outside a string literal ('...', "..." with escapes, `...` raw) starts a comment."""
    quote: str | None = None
    escaped = False
    for char in query:
        if quote is None:
            if char == "#":
                return True
            if char in "\"'`":
                quote = char
        elif escaped:
            escaped = False
        elif char == "\\" and quote != "`":
            escaped = True
        elif char == quote:
            quote = None
    return False


def _group_problem(matchers: list[promql_parser.Matcher]) -> str | None:
    on_namespace = [m for m in matchers if m.name == "namespace"]
    scoped = [
        m
        for m in on_namespace
        if m.op == promql_parser.MatchOp.Equal and m.value == NAMESPACE_PLACEHOLDER
    ]
    if len(on_namespace) > len(scoped):
        return (
            'may match namespace only as namespace="$namespace" (no !=, =~, !~ or other '
            "value), so that it reads no other namespace"
        )
    if not scoped:
        return (
            'must select the run\'s own series: a selector has no namespace="$namespace"; '
            f"add it to every selector, {_EXAMPLE}"
        )
    return None


def _selector_problem(selector: promql_parser.VectorSelector) -> str | None:
    groups = selector.matchers.or_matchers or [selector.matchers.matchers]
    for group in groups:
        problem = _group_problem(list(group))
        if problem:
            return problem
    return None


def _children(node: promql_parser.Expr) -> list[promql_parser.Expr]:
    """The sub-expressions of one node; raises TypeError on a kind not known here."""
    if isinstance(node, promql_parser.BinaryExpr):
        return [node.lhs, node.rhs]
    if isinstance(
        node, promql_parser.UnaryExpr | promql_parser.ParenExpr | promql_parser.SubqueryExpr
    ):
        return [node.expr]
    if isinstance(node, promql_parser.AggregateExpr):
        # quantile(scalar(other_series), ...): the parameter may select series too.
        param = [node.param] if isinstance(node.param, promql_parser.Expr) else []
        return [node.expr, *param]
    if isinstance(node, promql_parser.Call):
        return [arg for arg in node.args if isinstance(arg, promql_parser.Expr)]
    if isinstance(node, promql_parser.MatrixSelector):
        return [node.vector_selector]
    if isinstance(
        node,
        promql_parser.VectorSelector | promql_parser.NumberLiteral | promql_parser.StringLiteral,
    ):
        return []
    raise TypeError(type(node).__name__)


def scope_problem(query: str) -> str | None:
    """Why this query may read series outside the run's namespace, or cost Prometheus more
    than one trial's query should; None when neither."""
    if len(query) > MAX_QUERY_CHARS:
        return f"is {len(query)} characters long; at most {MAX_QUERY_CHARS} are allowed"
    if _has_comment(query):
        return "may not contain a comment (#); write the query alone"
    try:
        expression = promql_parser.parse(query.replace(WINDOW_PLACEHOLDER, _WINDOW_STAND_IN))
    except ValueError as exc:
        return f"is not valid PromQL ({exc}); {_EXAMPLE}"
    selectors = 0
    pending = [(expression, 1)]  # each node with the evaluations the subqueries around it ask
    while pending:
        node, outer = pending.pop()
        costly = cost_problem(node, outer)
        if costly:
            return costly
        try:
            inner = inner_evaluations(node, outer)
            pending.extend((child, inner) for child in _children(node))
        except TypeError as exc:
            return f"uses a PromQL construct ({exc}) whose series cannot be checked; {_EXAMPLE}"
        if isinstance(node, promql_parser.VectorSelector):
            selectors += 1
            problem = _selector_problem(node)
            if problem:
                return problem
    if selectors == 0:
        return f'selects no series; select the run\'s own with namespace="$namespace", {_EXAMPLE}'
    return None
