"""What a CapacityTest may ask the operator's Prometheus: an allow-list of servers, and
queries that stay inside the run's own namespace.

On a cluster the operator queries Prometheus with its own network position, so a
URL from the CR is a server-side request forgery waiting to happen (any reachable
address, cloud metadata endpoints included), and a custom PromQL query could read
other teams' series (`plimsoll.decide.promql_scope` parses each query). The
Kubernetes platform calls `metrics_problems` before it creates anything; each problem
names the field and the fix. Locally the user owns
both ends, so the local platform does not ask. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.promql_scope import scope_problem


def _normal(url: str) -> str:
    return url.rstrip("/")


def metrics_problems(spec: CapacityTestSpec, allowed_urls: Collection[str]) -> list[str]:
    """Every reason this spec's metrics may not be read by the operator; [] when fine."""
    problems: list[str] = []
    url = spec.metrics.prometheus_url
    if url is not None and _normal(url) not in {_normal(u) for u in allowed_urls}:
        problems.append(
            f"spec.metrics.prometheusUrl: {url!r} is not a Prometheus this operator may "
            "query; leave it unset to use the operator's, or have its admin add it to "
            "PLIMSOLL_ALLOWED_PROMETHEUS_URLS (Helm: prometheus.allowedUrls)"
        )
    queries = [
        (f"spec.metrics.extra[{i}].query", metric.query)
        for i, metric in enumerate(spec.metrics.extra)
    ] + [
        (f"spec.passWhen.promql[{i}].query", bound.query)
        for i, bound in enumerate(spec.pass_when.promql)
    ]
    for field, query in queries:
        problem = scope_problem(query)
        if problem:
            problems.append(f"{field}: {problem}")
    return problems
