"""The Argo CD Application example installs this chart before the tests.

Checks what Argo CD would act on: the chart source points at this chart, its
values pass the chart's schema, and they put every chart object in an earlier
sync wave than the CapacityTests of the other source (wave 0, no annotation).
"""

from __future__ import annotations

import yaml

from tests.charts.helm import CHART, ROOT, objects

EXAMPLE = ROOT / "examples" / "argocd-application.yaml"


def test_application_installs_the_operator_before_the_tests() -> None:
    app = yaml.safe_load(EXAMPLE.read_text())
    assert app["apiVersion"] == "argoproj.io/v1alpha1"
    assert app["kind"] == "Application"
    chart_source, tests_source = app["spec"]["sources"]
    assert ROOT / chart_source["path"] == CHART
    values = chart_source["helm"]["valuesObject"]
    rendered = objects(values)  # raises if the values break the chart's schema
    waves = {
        int(item["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]) for item in rendered
    }
    assert waves == {-1}
    assert max(waves) < 0  # CapacityTests without an annotation are wave 0
    assert "helm" not in tests_source
    assert tests_source["directory"]["include"] == "*.yaml"
