"""Which Prometheus a CapacityTest may have the operator query, and with what PromQL."""

from __future__ import annotations

from typing import Any

from plimsoll.api.resource import load_capacity_test
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.metrics_policy import metrics_problems

OURS = "http://prometheus-operated.monitoring:9090"


def spec(metrics: dict[str, Any], promql: list[dict[str, Any]] | None = None) -> CapacityTestSpec:
    return load_capacity_test(
        {
            "apiVersion": "plimsoll.dev/v1alpha1",
            "kind": "CapacityTest",
            "metadata": {"name": "t"},
            "spec": {
                "target": {"image": "app:1", "resources": {"cpu": "1", "memory": "512Mi"}},
                "workload": {"mix": [{"name": "get", "path": "/"}]},
                "metrics": metrics,
                "passWhen": {"promql": promql or []},
            },
        }
    ).spec


def test_the_operators_own_prometheus_and_the_allowed_ones_pass() -> None:
    assert metrics_problems(spec({}), {OURS}) == []
    assert metrics_problems(spec({"prometheusUrl": OURS + "/"}), {OURS}) == []


def test_any_other_url_is_refused_naming_the_field_and_the_fix() -> None:
    for url in (
        "http://169.254.169.254/latest/meta-data/#",
        "http://kube-apiserver.default:443/api?",
        "http://10.0.0.1:9090",
    ):
        [problem] = metrics_problems(spec({"prometheusUrl": url}), {OURS})
        assert problem.startswith(f"spec.metrics.prometheusUrl: {url!r} is not a Prometheus")
        assert "PLIMSOLL_ALLOWED_PROMETHEUS_URLS" in problem


def test_queries_must_select_the_runs_own_namespace() -> None:
    bad = spec(
        {"extra": [{"name": "all", "query": "sum(container_memory_working_set_bytes)"}]},
        promql=[{"name": "ok", "query": 'sum(x{namespace="$namespace"})', "below": 1}],
    )
    [problem] = metrics_problems(bad, {OURS})
    assert problem.startswith("spec.metrics.extra[0].query: must select the run's own series")
    worse = spec({}, promql=[{"name": "p", "query": "sum(kube_secret_info)", "below": 1}])
    assert metrics_problems(worse, {OURS})[0].startswith("spec.passWhen.promql[0].query")


def test_a_comment_or_a_negated_namespace_is_no_longer_enough() -> None:
    hidden = spec(
        {"extra": [{"name": "a", "query": "sum(kube_secret_info) # $namespace"}]},
        promql=[{"name": "b", "query": 'sum(x{namespace!="$namespace"})', "below": 1}],
    )
    comment, negated = metrics_problems(hidden, {OURS})
    assert comment.startswith("spec.metrics.extra[0].query: may not contain a comment")
    assert negated.startswith("spec.passWhen.promql[0].query: may match namespace only as")
