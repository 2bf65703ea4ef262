"""Hypothesis strategies for CapacityTests: drawn from the CRD's own schema, then mutated.

`capacity_tests()` draws documents that follow the generated openAPIV3Schema (types,
enums, patterns, bounds, required fields): what `kubectl apply` would let through
before any CEL rule. `mutated(document)` then breaks it the ways a careless or hostile
user does: a value of the wrong type at any path, a key deleted, NaN, infinity, huge and
negative numbers, odd strings (control characters, non-Latin-1, U+FFFE), non-string
keys, dates, bytes, snake_case twins of camelCase keys. The property test
(`test_boundary_property`) and `bench/bad_inputs.py` share them.
"""

from __future__ import annotations

import datetime
import functools
import math
from typing import Any

from hypothesis import strategies as st
from pydantic.alias_generators import to_snake

from plimsoll.api.crd import custom_resource_definition

MAX_DEPTH = 7

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**70,
    -(2**70),
    1e400,
    math.nan,
    math.inf,
    -math.inf,
    1e-300,
    "",
    " ",
    "\x00",
    "\x07bell",
    "\ufffe",
    "a\r\nX-Injected: 1",
    "Zürich",
    "名前",
    "\U0001f600",
    "../../etc/passwd",
    "x" * 5000,
    "0s",
    "0%",
    "-5",
    "nan",
    [],
    [None],
    {},
    {"": None},
    {None: 1},
    {1.5: "x"},
    {True: "x"},
    {datetime.date(2024, 1, 1): "x"},
    datetime.date(2024, 1, 1),
    datetime.datetime(2024, 1, 1, 12, 0),
    b"\x00binary",
]


def spec_schema() -> dict[str, Any]:
    schema = custom_resource_definition()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert isinstance(schema, dict)
    return schema


def _string(node: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in node:
        return st.sampled_from(node["enum"])
    if "pattern" in node:
        return st.from_regex(node["pattern"], fullmatch=True)
    return st.text(max_size=min(int(node.get("maxLength", 20)), 20))


def _number(node: dict[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    low, high = node.get("minimum"), node.get("maximum")
    if integer:
        return st.integers(
            min_value=int(low) if low is not None else -1000,
            max_value=int(high) if high is not None else 10**6,
        )
    return st.floats(
        min_value=low if low is not None else -1e6,
        max_value=high if high is not None else 1e6,
        allow_nan=False,
        allow_infinity=False,
    )


OPTIONAL_FIELDS = 3  # at most this many optional fields an object: small documents draw fast


def _some_fields(
    fields: dict[str, st.SearchStrategy[Any]], required: set[str]
) -> st.SearchStrategy[dict[str, Any]]:
    """The required fields and a few optional ones, each drawn from its own schema."""
    optional = sorted(set(fields) - required)

    @st.composite
    def draw_fields(draw: st.DrawFn) -> dict[str, Any]:
        chosen = (
            draw(st.sets(st.sampled_from(optional), max_size=OPTIONAL_FIELDS))
            if optional
            else set()
        )
        return {k: draw(fields[k]) for k in fields if k in required or k in chosen}

    return draw_fields()


def from_schema(node: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that follow one structural-schema node (the CRD's dialect)."""
    if "enum" in node:
        return st.sampled_from(node["enum"])
    if node.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, 10**6), _string(node))
    kind = node.get("type")
    if kind == "string":
        return _string(node)
    if kind == "integer":
        return _number(node, integer=True)
    if kind == "number":
        return _number(node, integer=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = node.get("items", {"type": "string"})
        low = int(node.get("minItems", 0))
        if depth >= MAX_DEPTH:
            return st.just([])
        return st.lists(from_schema(items, depth + 1), min_size=low, max_size=max(low, 2))
    if kind == "object" or "properties" in node:
        if depth >= MAX_DEPTH:
            return st.just({})
        properties = node.get("properties", {})
        if properties:
            required = set(node.get("required", []))
            fields = {k: from_schema(v, depth + 1) for k, v in properties.items()}
            return _some_fields(fields, required)
        values = node.get("additionalProperties")
        if isinstance(values, dict):
            keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
            return st.dictionaries(keys, from_schema(values, depth + 1), max_size=2)
        return st.just({})
    return st.none()


@functools.cache
def _spec_strategy() -> st.SearchStrategy[Any]:
    """Built once: the strategy tree (and its compiled patterns) is reused for each draw."""
    return from_schema(spec_schema()["properties"]["spec"])


@st.composite
def capacity_tests(draw: st.DrawFn) -> dict[str, Any]:
    """A document that follows the CRD's schema (CEL rules aside)."""
    spec = draw(_spec_strategy())
    name = draw(st.from_regex(r"[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?", fullmatch=True))
    return {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": name},
        "spec": spec,
    }


def paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into `document`: dict keys and list indexes."""
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found.extend(paths(value, (*prefix, key)))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(paths(value, (*prefix, index)))
    return found


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    node = document
    for part in path[:-1]:
        node = node[part]
    return node


@st.composite
def mutated(draw: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    """`document` with one to three mutations at paths drawn from it."""
    import copy

    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, 3))):
        targets = [p for p in paths(document) if p]
        if not targets:
            break
        path = draw(st.sampled_from(targets))
        parent = _parent(document, path)
        action = draw(st.sampled_from(["replace", "replace", "delete", "snake", "odd-key"]))
        leaf = path[-1]
        if action == "replace":
            parent[leaf] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))
        elif action == "delete":
            del parent[leaf]
        elif action == "snake" and isinstance(leaf, str) and to_snake(leaf) != leaf:
            parent[to_snake(leaf)] = parent.pop(leaf)
        elif action == "odd-key" and isinstance(parent, dict):
            key = draw(st.sampled_from([None, 1.5, True, datetime.date(2024, 1, 1), "", "a.b"]))
            parent[key] = parent.pop(leaf)
    return document


@st.composite
def hostile_capacity_tests(draw: st.DrawFn) -> dict[str, Any]:
    """A schema-following document, most often mutated."""
    document = draw(capacity_tests())
    if draw(st.integers(0, 4)) == 0:
        return document
    return draw(mutated(document))
