"""The CapacityTest CustomResourceDefinition, generated from the pydantic models.

Pydantic writes JSON Schema 2020-12; Kubernetes wants a *structural* OpenAPI v3
schema: no `$ref`, no `anyOf` carrying types, no `additionalProperties: false`
beside `properties`, boolean `exclusiveMinimum`, and defaults that validate
against their own schema. `structural_schema` rewrites one into the other, so
`crds/capacitytest.yaml` cannot drift from the code (a test regenerates it).
Defaults are left to the operator (pydantic applies them), which keeps the
stored object exactly what the user wrote.
"""

from __future__ import annotations

from typing import Any

import yaml

from plimsoll.api.base import MAX_ITEMS
from plimsoll.api.resource import GROUP, KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import CapacityTestStatus

# propertyNames (a bound on map keys) is not structural either: the models check the keys.
_DROPPED_KEYS = {"title", "default", "examples", "$defs", "propertyNames"}

PRINTER_COLUMNS = [
    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
    {"name": "Ceiling", "type": "integer", "jsonPath": ".status.ceiling.level"},
    {"name": "Unit", "type": "string", "jsonPath": ".status.ceiling.unit"},
    {"name": "Limited-By", "type": "string", "jsonPath": ".status.ceiling.limitedBy"},
    {"name": "Change", "type": "string", "jsonPath": ".status.change"},
    {"name": "Steps", "type": "integer", "jsonPath": ".status.stepCount"},
    {"name": "Variants", "type": "integer", "jsonPath": ".status.variantCount"},
    # Only a proof run (search.strategy: prove) sets the Proved condition: True or False.
    {
        "name": "Proved",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Proved")].status',
    },
    # Only an autoscaler flight (search.strategy: autoscale) fills it: held, or did not hold.
    {"name": "Flight", "type": "string", "jsonPath": ".status.autoscaling.verdict"},
    # Shown by `kubectl get -o wide`: only a run with spec.shapes fills it.
    {"name": "Cheapest", "type": "string", "jsonPath": ".status.cheapestShape", "priority": 1},
    # Also -o wide, and empty unless Queued: the place among the tests waiting for a
    # slot or a lock (the Phase column already says Queued).
    {"name": "Queue", "type": "integer", "jsonPath": ".status.queuePosition", "priority": 1},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


def _resolve(ref: str, defs: dict[str, Any]) -> dict[str, Any]:
    name = ref.rsplit("/", 1)[-1]
    return dict(defs[name])


def _structural_key(key: str, value: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """One keyword of a node in structural form: the keys it becomes (none, one or two)."""
    if key == "properties":
        return {key: {name: structural_schema(sub, defs) for name, sub in value.items()}}
    if key == "items":
        return {key: structural_schema(value, defs)}
    if key == "patternProperties":
        # A map whose keys have a pattern (env names): the API server has no
        # patternProperties, so the values' schema stays and the models check the keys.
        (values,) = value.values()
        return {"additionalProperties": structural_schema(values, defs)}
    if key == "additionalProperties":
        if value is False:
            return {}  # implied by `properties` in a structural schema
        if value is True or value == {}:
            return {"x-kubernetes-preserve-unknown-fields": True}
        return {key: structural_schema(value, defs)}
    if key == "exclusiveMinimum" and not isinstance(value, bool):
        return {"minimum": value, "exclusiveMinimum": True}
    if key == "exclusiveMaximum" and not isinstance(value, bool):
        return {"maximum": value, "exclusiveMaximum": True}
    if key == "const":
        return {"enum": [value]}
    return {key: value}


def structural_schema(node: Any, defs: dict[str, Any]) -> Any:
    """Rewrite one JSON Schema node (recursively) into Kubernetes' structural form."""
    if isinstance(node, list):
        return [structural_schema(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if "$ref" in node:
        ref = node.pop("$ref")
        node = {**_resolve(ref, defs), **node}
    if "anyOf" in node:
        # Optional[X] arrives as anyOf [X, null]: the field simply may be absent.
        options = [o for o in node.pop("anyOf") if o.get("type") != "null"]
        if sorted(o.get("type") for o in options) == ["integer", "string"]:
            # A count or a word (generators.replicas: 3 or auto): the API server's one
            # union; the models check which numbers and words are allowed.
            options = [{"x-kubernetes-int-or-string": True}]
        if len(options) != 1:
            raise ValueError(f"cannot express a union in a structural schema: {options}")
        node = {**structural_schema(options[0], defs), **node}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _DROPPED_KEYS:
            out.update(_structural_key(key, value, defs))
    if (
        out.get("type") == "object"
        and "properties" not in out
        and "additionalProperties" not in out
    ):
        out["x-kubernetes-preserve-unknown-fields"] = True
    if "x-kubernetes-int-or-string" in out:
        out.pop("type", None)
    # Bounded lists and maps (the models hold the same bound, `MAX_ITEMS`): without them
    # the API server prices every CEL rule inside as if the list filled a whole request.
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = MAX_ITEMS
    if isinstance(out.get("additionalProperties"), dict) and "maxProperties" not in out:
        out["maxProperties"] = MAX_ITEMS
    return out


def _model_schema(model: type[Any]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, mode="validation")
    defs = schema.get("$defs", {})
    result = structural_schema(schema, defs)
    assert isinstance(result, dict)
    return result


def openapi_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": _model_schema(CapacityTestSpec),
            "status": _model_schema(CapacityTestStatus),
        },
    }


def custom_resource_definition() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": PLURAL,
                "singular": SINGULAR,
                "shortNames": SHORT_NAMES,
                "categories": ["plimsoll"],
            },
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": PRINTER_COLUMNS,
                    "schema": {"openAPIV3Schema": openapi_schema()},
                }
            ],
        },
    }


class _PlainDumper(yaml.SafeDumper):
    """Writes a shared sub-schema out in full each time: no YAML anchors in the CRD."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def render_crd() -> str:
    header = "# Generated by `plimsoll crd` from plimsoll.api; do not edit by hand.\n"
    return header + yaml.dump(
        custom_resource_definition(), Dumper=_PlainDumper, sort_keys=False, width=100
    )
