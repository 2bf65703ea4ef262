"""A pydantic `ValidationError` in words: one 'field.path: what is wrong' per mistake.

The one formatter for every place bad input is reported: `load_capacity_test`
(so `plimsoll validate`, `plimsoll run` and the operator's status condition),
`plimsoll size`, a variant's spec inside the spec's own validator, the
generator's 422 answers and the mock's configuration errors. Each message says
what would be valid where pydantic's own words say little.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from plimsoll.api.bounded import HEADER_VALUE_PATTERN, PATH_PATTERN

# What a failed pattern means, in words, for the patterns whose regex alone says little.
_PATTERN_MEANINGS = {
    PATH_PATTERN: "a path starts with '/' and holds visible ASCII only: no spaces, CR/LF "
    "(they would split the request) or non-ASCII; percent-encode them, e.g. '%20'",
    HEADER_VALUE_PATTERN: "a header value holds visible ASCII, spaces and tabs only: no "
    "CR/LF (they would split the request) or non-ASCII; encode them, e.g. percent-encoding",
}

# pydantic's tags for the validator that ran, not fields a user wrote.
_INTERNAL_TAGS = frozenset({"int", "float", "str", "list", "dict"})


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
    kind, ctx = item["type"], item.get("ctx", {})
    if kind == "extra_forbidden":
        return "unknown field (check its spelling against `plimsoll crd`)"
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error" and "expected" in ctx:
        return f"must be {ctx['expected']}"
    if kind == "string_pattern_mismatch" and ctx.get("pattern") in _PATTERN_MEANINGS:
        return f"{item['input']!r}: {_PATTERN_MEANINGS[ctx['pattern']]}"
    if kind == "enum" and "expected" in ctx:
        return f"{item['input']!r} is not one of {ctx['expected']}"
    return str(item["msg"]).removeprefix("Value error, ")


def field_problems(error: ValidationError) -> list[FieldProblem]:
    """Each of `error`'s mistakes, in the order pydantic found them."""
    return [
        FieldProblem(field_path(tuple(item["loc"])), _message(item))
        for item in error.errors(include_url=False)
    ]


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
