"""What the API server would say about a CapacityTest, offline: schema and CEL rules.

`crd_problems(document)` checks a document against the generated CRD the way
the API server does, as far as it can be done without one:

- the openAPIV3Schema with jsonschema (Draft 4, as Kubernetes' OpenAPI v3 subset),
  `x-kubernetes-int-or-string` read as "an integer or a string" like the server;
- every `x-kubernetes-validations` rule, evaluated with cel-python on the value it
  sits on (`self`). Kubernetes' CEL extension libraries are not in cel-python: the
  `quantity()` library is emulated here with Plimsoll's own memory parser, so the
  rule's logic is checked, while its availability (Kubernetes 1.29+) and CEL cost
  limits are only checked by a real API server.
"""

from __future__ import annotations

import functools
from typing import Any

import celpy
import jsonschema
from celpy import celtypes

from plimsoll.api.crd import custom_resource_definition
from plimsoll.api.units import parse_memory


def _schema() -> dict[str, Any]:
    schema = custom_resource_definition()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert isinstance(schema, dict)
    return schema


def _int_or_string(node: Any) -> Any:
    if isinstance(node, list):
        return [_int_or_string(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _int_or_string(v) for k, v in node.items()}
    if out.pop("x-kubernetes-int-or-string", False):
        pattern = out.pop("pattern", None)
        string: dict[str, Any] = {"type": "string"}
        if pattern:
            string["pattern"] = pattern
        out["anyOf"] = [{"type": "integer"}, string]
    return out


def _quantity(text: Any) -> celtypes.IntType:
    return celtypes.IntType(parse_memory(str(text)))


def _compare_to(a: Any, b: Any) -> celtypes.IntType:
    return celtypes.IntType((a > b) - (a < b))


_FUNCTIONS = {"quantity": _quantity, "compareTo": _compare_to}


@functools.cache
def _program(rule: str) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(rule), functions=_FUNCTIONS)


def _cel(node: dict[str, Any], value: Any, path: str, out: list[str]) -> None:
    for check in node.get("x-kubernetes-validations", []):
        try:
            ok = _program(check["rule"]).evaluate({"self": celpy.json_to_cel(value)})
        except celpy.CELEvalError as exc:  # the server reports a rule that errors, too
            ok = False
            check = {**check, "message": f"{check.get('message', '')} ({exc})"}
        if isinstance(ok, celpy.CELEvalError) or not bool(ok):
            out.append(f"{path}: {check.get('message', check['rule'])}")
    if isinstance(value, dict):
        properties = node.get("properties", {})
        for key, item in value.items():
            sub = properties.get(key) or node.get("additionalProperties")
            if isinstance(sub, dict):
                _cel(sub, item, f"{path}.{key}", out)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for index, item in enumerate(value):
            _cel(node["items"], item, f"{path}[{index}]", out)


@functools.cache
def _validator() -> jsonschema.Draft4Validator:
    return jsonschema.Draft4Validator(_int_or_string(_schema()))


def crd_problems(document: dict[str, Any]) -> list[str]:
    """Every problem the schema and the CEL rules find, 'path: message'."""
    problems = [
        f"{_path(error.absolute_path)}: {error.message}"
        for error in _validator().iter_errors(document)
    ]
    _cel(_schema(), document, "", problems)
    return [p.removeprefix(".") for p in problems]


def _path(parts: Any) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
