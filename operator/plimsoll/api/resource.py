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
from plimsoll.api.plain import plain_problems
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import CapacityTestStatus
from plimsoll.api.validation_errors import describe_validation_error
from plimsoll.api.wording import found

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


def _header_problems(document: dict[str, Any]) -> list[str]:
    """apiVersion and kind as the API server needs them (it refuses a body without them)."""
    problems = []
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if api_version is None:
        problems.append(f"apiVersion: required field is missing: write {API_VERSION}")
    elif api_version != API_VERSION:
        problems.append(f"apiVersion: found {api_version!r}: must be {API_VERSION!r}")
    if kind is None:
        problems.append(f"kind: required field is missing: write {KIND}")
    elif kind != KIND:
        problems.append(f"kind: found {kind!r}: must be {KIND!r}")
    return problems


def load_capacity_test(document: Any) -> CapacityTest:
    """The CapacityTest in `document`, or `SpecError`; nothing else ever escapes.

    Checked as the API server would see it: plain JSON data first (`plimsoll.api.plain`),
    then the header, then the models by their camelCase names only (the server prunes
    `pass_when`, so accepting it here would make one file mean two things)."""
    if not isinstance(document, dict):
        raise SpecError(
            [
                f"(document): found {found(document)}: a CapacityTest is a mapping with "
                "apiVersion, kind, metadata and spec"
            ]
        )
    problems = plain_problems(document)
    if problems:
        raise SpecError(problems)
    problems = _header_problems(document)
    try:
        test = CapacityTest.model_validate(
            document, context={"bounded": True}, by_alias=True, by_name=False
        )
    except ValidationError as exc:
        known = {p.split(":", 1)[0] for p in problems}
        raise SpecError(
            problems
            + [
                line
                for line in describe_validation_error(exc)
                if line.split(":", 1)[0] not in known
            ]
        ) from exc
    except Exception as exc:  # a validator's bug must not become the caller's crash
        raise SpecError(
            [
                f"(document): could not be checked ({type(exc).__name__}: {exc}); this is a "
                "bug in Plimsoll, please report it with the file"
            ]
        ) from exc
    if problems:
        raise SpecError(problems)
    return test
