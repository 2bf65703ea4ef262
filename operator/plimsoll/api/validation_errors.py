"""A pydantic `ValidationError` in words: one 'field.path: what is wrong' per mistake.

The one formatter for every place bad input is reported: `load_capacity_test`
(so `plimsoll validate`, `plimsoll run` and the operator's status condition),
`plimsoll size`, a variant's spec inside the spec's own validator, the
generator's 422 answers and the mock's configuration errors. Each message says
what would be valid where pydantic's own words say little.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from plimsoll.api.wording import found, list_shape, pattern_meaning, section_shape

# pydantic's tags for the validator that ran (and for a map's key), not fields a user wrote.
_INTERNAL_TAGS = frozenset({"int", "float", "str", "list", "dict", "[key]"})

_WRONG_TYPES = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


@dataclass(frozen=True)
class FieldProblem:
    """One mistake: where (`spec.trial.duration`, `routes[0].path`; '' for the whole
    document) and what is wrong, said so that the fix is plain."""

    field: str
    message: str

    def line(self, whole: str = "(document)") -> str:
        return f"{self.field or whole}: {self.message}"


def field_path(loc: tuple[int | str, ...]) -> str:
    """pydantic's location as the user wrote it: `upstream.routes[0].path`."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.startswith("function-") or part in _INTERNAL_TAGS:
            continue
        else:
            path += f".{part}" if path else part
    return path


def _message(item: Any) -> str:
    """What is wrong with one field and how to fix it, in words (`plimsoll.api.wording`)."""
    kind, ctx, loc = item["type"], item.get("ctx", {}), item["loc"]
    value = item.get("input")
    field = str(next((p for p in reversed(loc) if isinstance(p, str)), "value"))
    if kind == "extra_forbidden":
        camel = to_camel(field)
        if "_" in field and camel != field:
            return (
                f"unknown field: the name is {camel!r} (camelCase); the API server drops "
                f"{field!r}, so the two would mean different things"
            )
        return "unknown field (check its spelling against `plimsoll crd`)"
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error" and "expected" in ctx:
        return f"found {value!r}: must be {ctx['expected']}"
    if kind == "string_pattern_mismatch":
        return f"{value!r} is not allowed: {pattern_meaning(str(ctx.get('pattern')))}"
    if kind == "enum" and "expected" in ctx:
        return f"{value!r} is not one of {ctx['expected']}"
    if kind == "model_type":
        shape = section_shape(str(ctx.get("class_name")), field)
        return f"found {found(value)} where {shape} belongs"
    if kind in ("model_attributes_type", "dict_type"):
        return f"found {found(value)} where a mapping belongs, e.g. `{field}: {{key: value}}`"
    if kind == "list_type":
        return f"found {found(value)} where {list_shape(field)} belongs"
    if kind in _WRONG_TYPES:
        return f"found {found(value)} where {_WRONG_TYPES[kind]} belongs"
    if kind == "string_too_long" and isinstance(value, str) and "max_length" in ctx:
        return (
            f"is {len(value)} characters long; at most {ctx['max_length']} are allowed: shorten it"
        )
    if kind == "finite_number":
        return f"{value!r} is not a finite number: write a number such as 1.5"
    return str(item["msg"]).removeprefix("Value error, ")


# A validator's message line that starts with the field it is about, 'upstreams[0].envVar: '.
_RELATIVE = re.compile(r"^([A-Za-z][\w-]*(?:\[\d+\]|\.[\w-]+)*): (.*)$", re.DOTALL)


def _placed(base: str, line: str) -> FieldProblem:
    """`line` under the field path `base`; a line that names a field inside it (a
    validator of a whole section reports each problem on its own line) gets the full path,
    so `spec.target.podTemplate` + 'podTemplate.spec.containers: ...' is the problem of
    `spec.target.podTemplate.spec.containers`."""
    match = _RELATIVE.match(line)
    if match is None:
        return FieldProblem(base, line)
    inner, message = match.groups()
    leaf = re.sub(r"\[\d+\]$", "", base.rsplit(".", 1)[-1]) if base else ""
    if leaf and (inner == leaf or inner.startswith((f"{leaf}.", f"{leaf}["))):
        inner = inner[len(leaf) :]
    elif base and not inner.startswith("["):
        inner = f".{inner}"
    return FieldProblem(f"{base}{inner}", message)


def field_problems(error: ValidationError) -> list[FieldProblem]:
    """Each of `error`'s mistakes, in the order pydantic found them."""
    problems: list[FieldProblem] = []
    for item in error.errors(include_url=False):
        base = field_path(tuple(item["loc"]))
        problems.extend(_placed(base, line) for line in _message(item).split("\n") if line)
    return problems


def describe_validation_error(error: ValidationError, whole: str = "(document)") -> list[str]:
    """One line per mistake, `spec.trial.duration: <what is wrong and how to fix it>`;
    `whole` names the document itself where a mistake is in no one field."""
    return [problem.line(whole) for problem in field_problems(error)]


def one_line(error: ValueError) -> str:
    """A nested model's error as one line, 'field: message; field: message' (a plain
    ValueError as its text)."""
    if not isinstance(error, ValidationError):
        return str(error)
    return "; ".join(describe_validation_error(error, whole="(value)"))
