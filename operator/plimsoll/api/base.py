"""The base every Plimsoll payload model derives from.

Kubernetes objects are camelCase and our Python is snake_case: an alias generator
bridges them, and `populate_by_name` lets Python code build models by field name.
`extra="forbid"` turns a misspelt field into an error that names it, instead of a
setting silently ignored (the API server prunes unknown fields the same way, so a
typo would otherwise vanish without a word). A boolean where a number belongs
(`port: true`) is refused rather than read as 1, as pydantic's lax mode would.
In user input (validated with context `{"bounded": True}`, as `load_capacity_test`
does) every list and map holds at most `MAX_ITEMS` entries unless its field says
otherwise: the CRD publishes the same bound (`plimsoll.api.crd`), which the API
server needs to keep the cost of its CEL rules bounded. Reports and results,
which grow with a run, are not held to it.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

MAX_ITEMS = 64


def _numeric(annotation: Any) -> bool:
    """True for int, float, their Optional and Annotated forms, and lists of them."""
    origin = typing.get_origin(annotation)
    if annotation in (int, float):
        return True
    if origin is typing.Annotated:
        return _numeric(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(args) and all(_numeric(a) for a in args)
    return False


class PlimsollModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_default=True,
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is None:
            return value
        bounded = isinstance(info.context, dict) and info.context.get("bounded")
        if bounded and isinstance(value, list | dict) and len(value) > MAX_ITEMS:
            explicit = [m.max_length for m in field.metadata if hasattr(m, "max_length")]
            if not explicit or explicit[0] is None:
                raise ValueError(f"{len(value)} entries: at most {MAX_ITEMS}")
        if not _numeric(field.annotation):
            return value
        items = value if isinstance(value, list) else [value]
        if any(isinstance(item, bool) for item in items):
            raise ValueError("true or false where a number belongs: write a number")
        return value

    def to_wire(self) -> dict[str, Any]:
        """The JSON-compatible dict other processes and the API server read: camelCase
        names, and an unset (None) field left out. The one rule for every payload that
        leaves the process; readers validate it back with `model_validate`."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_wire_json(self, indent: int | None = None) -> str:
        """`to_wire` as JSON text, for files, pipes and ConfigMaps."""
        return self.model_dump_json(by_alias=True, exclude_none=True, indent=indent)
