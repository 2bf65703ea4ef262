"""The generated CRD: current, structural, accepted by Kubernetes' schemas, and it admits
every example the models admit."""

from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from plimsoll.api.crd import custom_resource_definition, render_crd

ROOT = Path(__file__).parents[2]
CHECKED_IN = ROOT / "crds" / "capacitytest.yaml"


def test_the_checked_in_crd_is_current() -> None:
    assert CHECKED_IN.read_text() == render_crd(), "run `make crd` and commit the result"


def test_the_crd_object_is_valid_for_kubernetes() -> None:
    kubernetes_validate.validate(custom_resource_definition(), "1.34", strict=True)


def _walk(node: Any, path: str = "") -> list[str]:
    """Violations of the structural-schema rules an API server enforces."""
    problems: list[str] = []
    if not isinstance(node, dict):
        return problems
    for banned in ("$ref", "anyOf", "oneOf", "allOf", "not", "default", "const"):
        if banned in node:
            problems.append(f"{path}: has {banned}")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{path}: properties beside additionalProperties")
    typed = (
        "type" in node
        or node.get("x-kubernetes-int-or-string")
        or node.get("x-kubernetes-preserve-unknown-fields")
    )
    if not typed:
        problems.append(f"{path}: no type")
    for name, sub in node.get("properties", {}).items():
        problems += _walk(sub, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        problems += _walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        problems += _walk(node["additionalProperties"], f"{path}{{}}")
    return problems


def test_the_schema_is_structural() -> None:
    schema = custom_resource_definition()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert _walk(schema) == []


def test_printer_columns_show_the_answer() -> None:
    version = custom_resource_definition()["spec"]["versions"][0]
    names = [column["name"] for column in version["additionalPrinterColumns"]]
    assert names == [
        "Phase",
        "Ceiling",
        "Unit",
        "Limited-By",
        "Change",
        "Steps",
        "Variants",
        "Proved",
        "Flight",
        "Cheapest",
        "Queue",
        "Age",
    ]
    assert version["subresources"] == {"status": {}}


def _validator() -> jsonschema.Draft4Validator:
    schema = custom_resource_definition()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return jsonschema.Draft4Validator(schema)


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_passes_the_crd_schema(path: Path) -> None:
    for document in yaml.safe_load_all(path.read_text()):
        if document and document.get("kind") == "CapacityTest":
            errors = [e.message for e in _validator().iter_errors(document)]
            assert errors == []


def test_the_crd_schema_rejects_what_the_models_reject() -> None:
    document = yaml.safe_load((ROOT / "examples" / "edge-max-rps.yaml").read_text())
    document["spec"]["trial"]["duration"] = "-5s"
    document["spec"]["workload"]["protocol"] = "grpc"
    document["spec"]["target"]["resources"]["memory"] = "2GB"
    messages = " ".join(e.message for e in _validator().iter_errors(document))
    assert "'-5s' does not match" in messages
    assert "'grpc' is not one of" in messages
    assert "'2GB' does not match" in messages
