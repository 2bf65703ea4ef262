"""The Grafana dashboard: valid JSON, shipped by the chart for the sidecar, and every
PromQL expression in it names only metrics the operator exports.

The exported names come from the operator's own `/metrics` text (`OperatorMetrics`
rendered with one finished run recorded), not from a list kept beside the dashboard.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.controller.operator_metrics import OperatorMetrics
from tests.charts.helm import CHART, objects, one

DASHBOARD = CHART / "files" / "grafana-dashboard.json"
# PromQL words that are neither metrics nor functions (functions are followed by "(").
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
KEYWORDS |= {"and", "or", "unless"}


def exported_metrics() -> set[str]:
    metrics = OperatorMetrics()
    status = CapacityTestStatus(phase=Phase.SUCCEEDED, completion_time=datetime.now(UTC))
    metrics.record_result("perf", "api", status)
    text = metrics.render()
    names = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)", text, re.MULTILINE):
        names.add(name)
        if kind == "histogram":
            names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    return names


def metric_names(expr: str) -> set[str]:
    """The bare identifiers of a PromQL expression that are not functions, keywords or
    labels: its metric names."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)  # strings (label values)
    bare = re.sub(r"\{[^}]*\}", "", bare)  # label matchers
    bare = re.sub(r"\[[^\]]*\]", "", bare)  # range selectors
    bare = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", bare)  # grouping labels
    found = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", bare):
        word, rest = match.group(), bare[match.end() :].lstrip()
        if word in KEYWORDS or rest.startswith("("):
            continue
        found.add(word)
    return found


def expressions(dashboard: dict[str, Any]) -> list[str]:
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):
            inner = re.fullmatch(r"label_values\((.*),\s*\w+\)", query["query"])
            assert inner, variable["name"]
            exprs.append(inner.group(1))
    return exprs


def test_every_expression_names_only_metrics_the_operator_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    exported = exported_metrics()
    exprs = expressions(dashboard)
    assert len(exprs) >= 8
    for expr in exprs:
        used = metric_names(expr)
        assert used, expr  # every expression reads at least one series
        assert used <= exported, (expr, used - exported)


def test_the_parser_would_catch_a_metric_the_operator_does_not_export() -> None:
    assert metric_names('sum by (phase) (rate(plimsoll_nothing{a="b"}[5m]))') == {
        "plimsoll_nothing"
    }
    assert metric_names("time() - max by (name) (up)") == {"up"}


def test_the_panels_cover_ceiling_band_regressions_last_success_and_steps() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    by_title = {
        p["title"]: {m for t in p["targets"] for m in metric_names(t["expr"])}
        for p in dashboard["panels"]
    }
    assert by_title["Ceiling per test"] == {
        "plimsoll_ceiling",
        "plimsoll_ceiling_low",
        "plimsoll_ceiling_high",
    }
    assert by_title["Regressed"] == {"plimsoll_regressed"}
    assert by_title["Since the last success"] == {"plimsoll_last_success_timestamp_seconds"}
    assert by_title["Steps per run"] == {"plimsoll_run_steps"}


def test_the_chart_ships_it_for_the_sidecar_only_when_asked() -> None:
    assert not [
        o for o in objects({}) if o["kind"] == "ConfigMap" and "dashboard" in o["metadata"]["name"]
    ]
    values = {"metrics": {"grafanaDashboard": {"enabled": True, "namespace": "monitoring"}}}
    maps = [o for o in objects(values) if o["kind"] == "ConfigMap"]
    dashboard = one([m for m in maps if m["metadata"]["name"].endswith("-dashboard")], "ConfigMap")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["metadata"]["namespace"] == "monitoring"
    shipped = json.loads(dashboard["data"]["plimsoll-capacity.json"])
    assert shipped == json.loads(DASHBOARD.read_text())
