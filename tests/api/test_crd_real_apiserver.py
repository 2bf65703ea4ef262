"""The generated CRD on a real kube-apiserver: installed, and refusing the bad-input table.

jsonschema and cel-python (`test_bad_input`) evaluate the schema and the rules,
but only the API server checks that the CRD is accepted at all (structural
schema, CEL compilation with Kubernetes' libraries such as `quantity()`, the CEL
cost budget), and that `kubectl apply` refuses each bad case with the field
named. They use the session's control plane (`tests/controller/apiserver_fixtures.py`),
which already holds the generated CRD; without `../shared/k8s` they skip, and fail
under CI=true.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
import yaml

from tests.api.test_bad_input import BASE, MODEL_ONLY, SCHEMA_CASES
from tests.controller.apiserver_fixtures import Installed
from tests.controller.control_plane import ControlPlane
from tests.localrun import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture
def plane(control_plane_installed: Installed) -> ControlPlane:
    return control_plane_installed.plane


def _create(plane: ControlPlane, document: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    document = json.loads(json.dumps(document))
    document["metadata"]["namespace"] = "default"
    return plane.kubectl(
        "create", "--dry-run=server", "-f", "-", stdin=json.dumps(document), check=False
    )


def test_the_base_and_the_examples_are_accepted(plane: ControlPlane) -> None:
    assert _create(plane, BASE).returncode == 0
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document and document.get("kind") == "CapacityTest":
                created = _create(plane, document)
                assert created.returncode == 0, (path.name, created.stderr)


@pytest.mark.parametrize(
    ("document", "field"),
    [
        pytest.param(d, f, id=i)
        for i, d, f, _ in SCHEMA_CASES
        if i not in MODEL_ONLY and i != "infinite-weight"  # JSON cannot carry infinity
    ],
)
def test_kubectl_apply_refuses_each_case_naming_the_field(
    plane: ControlPlane, document: dict[str, Any], field: str
) -> None:
    created = _create(plane, document)
    assert created.returncode != 0
    assert field in created.stderr, created.stderr
