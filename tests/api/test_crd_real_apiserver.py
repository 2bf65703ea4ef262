"""The generated CRD on a real kube-apiserver: installed, and refusing the bad-input table.

jsonschema and cel-python (`test_bad_input`) evaluate the schema and the rules,
but only the API server checks that the CRD is accepted at all (structural
schema, CEL compilation with Kubernetes' libraries such as `quantity()`, the CEL
cost budget), and that `kubectl apply` refuses each bad case with the field
named. The control plane is `../shared/k8s` (real etcd + kube-apiserver on
loopback); without it these tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.api.crd import render_crd
from tests.api.test_bad_input import BASE, MODEL_ONLY, SCHEMA_CASES

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CONTROL_PLANE = ROOT.parent / "shared" / "k8s" / "control-plane"


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    if not CONTROL_PLANE.exists():
        pytest.skip(f"needs the real Kubernetes control plane {CONTROL_PLANE}; it is absent here")
    folder = tmp_path_factory.mktemp("k8s")
    up = subprocess.run(
        [CONTROL_PLANE, "up", folder], stdout=subprocess.PIPE, text=True, timeout=600, check=False
    )
    assert up.returncode == 0, "control-plane up failed; its stderr says why"
    config = up.stdout.strip().removeprefix("KUBECONFIG=")
    command = [str(folder / "bin" / "kubectl"), "--kubeconfig", config]
    try:
        crd = folder / "crd.yaml"
        crd.write_text(render_crd())
        applied = _run([*command, "apply", "-f", str(crd)])
        assert applied.returncode == 0, applied.stderr
        established = _run(
            [*command, "wait", "--for=condition=established", "crd/capacitytests.plimsoll.dev"]
        )
        assert established.returncode == 0, established.stderr
        yield command
    finally:
        subprocess.run([CONTROL_PLANE, "down", "--wipe", folder], check=True, timeout=120)


def _run(command: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "KUBECONFIG": ""},
    )


def _create(kubectl: list[str], document: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    document = json.loads(json.dumps(document))
    document["metadata"]["namespace"] = "default"
    return _run([*kubectl, "create", "--dry-run=server", "-f", "-"], json.dumps(document))


def test_the_base_and_the_examples_are_accepted(kubectl: list[str]) -> None:
    assert _create(kubectl, BASE).returncode == 0
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document and document.get("kind") == "CapacityTest":
                created = _create(kubectl, document)
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
    kubectl: list[str], document: dict[str, Any], field: str
) -> None:
    created = _create(kubectl, document)
    assert created.returncode != 0
    assert field in created.stderr, created.stderr
