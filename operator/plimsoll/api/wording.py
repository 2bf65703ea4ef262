"""Words for what pydantic reports in its own terms: patterns, shapes, the input found.

`describe_validation_error` (`plimsoll.api.resource`), the one formatter of
validation errors, asks here how to say three things a person can act on:
- what a pattern allows, in words (never the raw regex: `PATTERN_MEANINGS` holds a
  meaning for every pattern the models use, which a test checks against the CRD);
- what shape a section has, with a one-line example built from the model itself
  (instead of "Input should be a valid dictionary or instance of Target");
- what was found, named as YAML would show it ("a list", "text ('5')").
Pure; the model registry is built once from the spec's own field types.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Any

from pydantic import BaseModel

from plimsoll.api.bounded import (
    ENV_NAME_PATTERN,
    HEADER_NAME_PATTERN,
    HEADER_VALUE_PATTERN,
    IMAGE_PATTERN,
    PATH_PATTERN,
    URL_PATTERN,
)
from plimsoll.api.gate import BASELINE_PATTERN
from plimsoll.api.target import LOCK_KEY_PATTERN, NAME_PATTERN
from plimsoll.api.units import (
    CPU_PATTERN,
    DURATION_PATTERN,
    MEMORY_PATTERN,
    PERCENT_PATTERN,
    QUANTILE_PATTERN,
)

_OP_NAME = r"^[a-z0-9][a-z0-9_.-]*$"
_METHODS = r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$"

PATTERN_MEANINGS: dict[str, str] = {
    LOCK_KEY_PATTERN: "letters, digits and '-', '_', '.', ':', '/', '@', starting with a letter "
    "or digit, e.g. 'shared-shop' or 'registry.local/shop:1.4'",
    NAME_PATTERN: "a name of lowercase letters, digits and '-' that starts and ends with a "
    "letter or digit (a Kubernetes DNS label), e.g. 'my-service'",
    _OP_NAME: "lowercase letters, digits, '_', '.' and '-', starting with a letter or digit, "
    "e.g. 'get-item'",
    r"^[A-Za-z0-9_.-]+$": "letters, digits, '_', '.' and '-' only, e.g. 'search_docs'",
    r"^[a-z]([a-z0-9-]{0,18}[a-z0-9])?$": "a short name: at most 20 lowercase letters, digits "
    "and '-', starting with a letter and not ending with '-', e.g. 'auth'",
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$": "a Kubernetes object "
    "name: lowercase letters, digits, '-' and '.', e.g. 'app-secrets'",
    r"^[-._a-zA-Z0-9]+$": "a key of letters, digits, '-', '_' and '.', e.g. 'password'",
    ENV_NAME_PATTERN: "an environment variable name: letters, digits and '_', not starting "
    "with a digit, e.g. 'UPSTREAM_URL'",
    r"^https?://": "a URL that starts with http:// or https://, e.g. 'http://prometheus:9090'",
    URL_PATTERN: "a URL that starts with http:// or https://, then visible ASCII only (no "
    "spaces, CR/LF or non-ASCII), e.g. 'http://prometheus:9090'",
    IMAGE_PATTERN: "an image reference: an optional registry host (with a '.', a port or "
    "'localhost'), lowercase path parts, an optional ':tag' and '@sha256:digest', e.g. "
    "'ghcr.io/acme/api:1.2'",
    r"^(total|ttft|added)$": "one of total, ttft, added",
    r"^(none|request|user|second)$": "one of none, request, user, second",
    r"^(start|end)$": "one of start, end",
    r"^(s|ms)$": "one of s, ms",
    _METHODS: "an HTTP method in capitals: GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS",
    BASELINE_PATTERN: "'previous', 'best' or a run number, e.g. 'previous'",
    PATH_PATTERN: "a path starts with '/' and holds visible ASCII only: no spaces, CR/LF "
    "(they would split the request) or non-ASCII; percent-encode them, e.g. '%20'",
    HEADER_VALUE_PATTERN: "a header value holds visible ASCII, spaces and tabs only: no "
    "CR/LF (they would split the request) or non-ASCII; encode them, e.g. percent-encoding",
    HEADER_NAME_PATTERN: "a header name of letters, digits and -!#$%&'*+.^_`|~, e.g. 'X-Tenant'",
    DURATION_PATTERN: "a duration such as '30s', '250ms', '5m' or '1h30m'",
    MEMORY_PATTERN: "an amount of memory such as '512Mi', '2Gi' or '1000000'",
    CPU_PATTERN: "CPU as cores or millicores, e.g. '1', '0.5' or '250m' (at least 1m)",
    PERCENT_PATTERN: "a percentage such as '60%' or '99.5%'",
    QUANTILE_PATTERN: "a quantile such as 'p50', 'p99' or 'p99.9'",
}


def pattern_meaning(pattern: str) -> str:
    """What `pattern` allows, in words; a generic phrase for one not listed (a test keeps
    the list complete for every pattern the CRD holds)."""
    return PATTERN_MEANINGS.get(pattern, "does not have the allowed form (see `plimsoll crd`)")


def found(value: Any) -> str:
    """The input, named the way its YAML reads: 'text ('5')', 'a list', 'a number (5)'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a boolean)"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text ({shown!r})"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is None:
        return []
    if origin is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, dict):
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    return []


@functools.cache
def _registry() -> dict[str, type[BaseModel]]:
    """Every model reachable from the CapacityTest spec, by class name."""
    from plimsoll.api.spec import CapacityTestSpec  # the spec imports this module's peers

    seen: dict[str, type[BaseModel]] = {}
    stack: list[type[BaseModel]] = [CapacityTestSpec]
    while stack:
        model = stack.pop()
        if model.__name__ in seen:
            continue
        seen[model.__name__] = model
        for field in model.model_fields.values():
            stack.extend(_models_in(field.annotation))
    return seen


def _example_fields(model: type[BaseModel]) -> list[str]:
    """Up to three of the model's fields, the required ones first, by their YAML names."""
    fields = list(model.model_fields.items())
    ordered = [f for f in fields if f[1].is_required()] + [
        f for f in fields if not f[1].is_required()
    ]
    return [info.alias or name for name, info in ordered[:3]]


# Examples for the sections people write most; others are built from the model's fields.
_EXAMPLES = {
    "Target": "{image: registry.example/api:1.2, resources: {cpu: '1', memory: 512Mi}}",
    "PodShape": "{cpu: '1', memory: 512Mi}",
    "Workload": "{model: rate, mix: [{name: get, path: /}]}",
    "Trial": "{duration: 60s, warmUp: 10s}",
    "Search": "{strategy: doubling, start: 100}",
    "PassWhen": "{latency: [{quantile: p99, below: 200ms}]}",
    "Upstream": "{routes: [{name: items, path: /items}]}",
    "Schedule": "{cron: '0 3 * * *'}",
    "SizingSpec": "{peak: 5000, utilisation: 60%}",
}


def section_shape(class_name: str, field: str) -> str:
    """'a mapping of its fields, e.g. `target: {image: ..., resources: ...}`'."""
    example = _EXAMPLES.get(class_name)
    if example is None:
        model = _registry().get(class_name)
        if model is None:
            return "a mapping of fields (see `plimsoll crd` for them)"
        example = "{" + ", ".join(f"{name}: ..." for name in _example_fields(model)) + "}"
    return f"a mapping of its fields, e.g. `{field}: {example}`"


def list_shape(field: str) -> str:
    """'a list, one item a line: `mix: [...]` or lines starting with '- ''."""
    return f"a list: `{field}: [...]`, or one item a line under it starting with '- '"
