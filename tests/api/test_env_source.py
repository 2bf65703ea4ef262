"""`valueFrom` in the spec: only a Secret's or a ConfigMap's key, named clearly when wrong."""

from __future__ import annotations

from typing import Any

import pytest

from plimsoll.api.resource import SpecError, load_capacity_test
from plimsoll.api.spec import CapacityTestSpec

SECRET = {"secretKeyRef": {"name": "db", "key": "password"}}
CONFIG = {"configMapKeyRef": {"name": "app-config", "key": "mode"}}


def load(target: dict[str, Any], **extra: Any) -> CapacityTestSpec:
    body = {
        "target": {"image": "app:1", "resources": {"cpu": "1", "memory": "256Mi"}, **target},
        "workload": {"mix": [{"name": "w", "path": "/"}]},
        **extra,
    }
    resource = {"apiVersion": "plimsoll.dev/v1alpha1", "kind": "CapacityTest"}
    return load_capacity_test({**resource, "metadata": {"name": "t"}, "spec": body}).spec


def test_secret_and_configmap_keys_are_accepted_for_target_and_services() -> None:
    service = {"name": "db", "image": "postgres:17", "port": 5432, "valueFrom": {"PW": SECRET}}
    spec = load({"valueFrom": {"DB_PASSWORD": SECRET, "MODE": CONFIG}}, services=[service])
    assert spec.target.value_from["DB_PASSWORD"].describe() == "Secret 'db' key 'password'"
    assert spec.target.value_from["MODE"].kind() == "ConfigMap"
    assert spec.services[0].value_from["PW"].ref().key == "password"


@pytest.mark.parametrize(
    ("value_from", "complaint"),
    [
        ({"X": {}}, "exactly one of secretKeyRef or configMapKeyRef"),
        ({"X": {**SECRET, **CONFIG}}, "exactly one of secretKeyRef or configMapKeyRef"),
        ({"X": {"fieldRef": {"fieldPath": "metadata.name"}}}, "fieldRef"),
        ({"X": {"secretKeyRef": {"name": "Bad_Name", "key": "k"}}}, "name"),
        ({"1X": SECRET}, "'1X' is not an environment variable name"),
        (
            {"T": {"secretKeyRef": {"name": "plimsoll-control-token", "key": "token"}}},
            "may not name the run's control-token Secret",
        ),
    ],
)
def test_anything_else_is_refused_naming_it(value_from: dict[str, Any], complaint: str) -> None:
    with pytest.raises(SpecError, match=complaint):
        load({"valueFrom": value_from})


def test_a_variable_in_both_env_and_value_from_is_refused() -> None:
    with pytest.raises(SpecError, match="X is in both env and valueFrom"):
        load({"env": {"X": "1"}, "valueFrom": {"X": SECRET}})
