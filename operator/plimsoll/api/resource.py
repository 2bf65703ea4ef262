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
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import CapacityTestStatus
from plimsoll.api.validation_errors import describe_validation_error

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


def load_capacity_test(document: Any) -> CapacityTest:
    if not isinstance(document, dict):
        raise SpecError(["(document): a CapacityTest is a mapping with apiVersion, kind, spec"])
    try:
        return CapacityTest.model_validate(document, context={"bounded": True})
    except ValidationError as exc:
        raise SpecError(describe_validation_error(exc)) from exc
