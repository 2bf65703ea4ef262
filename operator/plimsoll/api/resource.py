"""The CapacityTest resource as a whole, and how bad input is reported.

`load_capacity_test` is the one entry point for user input (CLI and operator
alike): it returns the model, or raises `SpecError` whose lines each name the
field path and say what would be valid. The operator puts the same lines in a
status condition; `plimsoll validate` prints them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import HEADER_VALUE_PATTERN, PATH_PATTERN
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import CapacityTestStatus

GROUP = "plimsoll.dev"
VERSION = "v1alpha1"
API_VERSION: Literal["plimsoll.dev/v1alpha1"] = "plimsoll.dev/v1alpha1"
KIND: Literal["CapacityTest"] = "CapacityTest"
PLURAL = "capacitytests"
SINGULAR = "capacitytest"
SHORT_NAMES = ["ct", "captest"]


class ObjectMeta(PlimsollModel):
    """The parts of metadata Plimsoll reads; the rest passes through untouched."""

    model_config = {"extra": "allow"}

    name: str = Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    namespace: str | None = None
    uid: str | None = None
    generation: int | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class CapacityTest(PlimsollModel):
    api_version: Literal["plimsoll.dev/v1alpha1"] = API_VERSION
    kind: Literal["CapacityTest"] = KIND
    metadata: ObjectMeta
    spec: CapacityTestSpec
    status: CapacityTestStatus | None = None


class SpecError(ValueError):
    """An invalid CapacityTest: `problems` holds one 'path: message' line per mistake."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid CapacityTest:\n" + "\n".join(f"  {p}" for p in problems))


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.startswith("function-") or part in {"int", "float", "str", "list", "dict"}:
            continue  # pydantic's internal validator tags, not user-visible fields
        else:
            path += f".{part}" if path else part
    return path or "(document)"


# What a failed pattern means, in words, for the patterns whose regex alone says little.
_PATTERN_MEANINGS = {
    PATH_PATTERN: "a path starts with '/' and holds visible ASCII only: no spaces, CR/LF "
    "(they would split the request) or non-ASCII; percent-encode them, e.g. '%20'",
    HEADER_VALUE_PATTERN: "a header value holds visible ASCII, spaces and tabs only: no "
    "CR/LF (they would split the request) or non-ASCII; encode them, e.g. percent-encoding",
}


def describe_validation_error(error: ValidationError) -> list[str]:
    """One line per error, `spec.trial.duration: <what is wrong and how to fix it>`."""
    lines = []
    for item in error.errors(include_url=False):
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field (check its spelling against `plimsoll crd`)"
        elif item["type"] == "missing":
            message = "required field is missing"
        elif item["type"] == "literal_error" and item["loc"][-1:] == ("apiVersion",):
            message = f"must be {API_VERSION!r}"
        elif (
            item["type"] == "string_pattern_mismatch"
            and item.get("ctx", {}).get("pattern") in _PATTERN_MEANINGS
        ):
            message = f"{item['input']!r}: {_PATTERN_MEANINGS[item['ctx']['pattern']]}"
        elif item["type"] == "enum" and "expected" in item.get("ctx", {}):
            message = f"{item['input']!r} is not one of {item['ctx']['expected']}"
        lines.append(f"{_field_path(tuple(item['loc']))}: {message}")
    return lines


def load_capacity_test(document: Any) -> CapacityTest:
    if not isinstance(document, dict):
        raise SpecError(["(document): a CapacityTest is a mapping with apiVersion, kind, spec"])
    try:
        return CapacityTest.model_validate(document, context={"bounded": True})
    except ValidationError as exc:
        raise SpecError(describe_validation_error(exc)) from exc
