"""The base every Plimsoll payload model derives from.

Kubernetes objects are camelCase and our Python is snake_case: an alias generator
bridges them, and `populate_by_name` lets Python code build models by field name.
`extra="forbid"` turns a misspelt field into an error that names it, instead of a
setting silently ignored (the API server prunes unknown fields the same way, so a
typo would otherwise vanish without a word).
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class PlimsollModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_default=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-compatible dict other processes and the API server read."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @classmethod
    def from_wire(cls, data: Any) -> Self:
        return cls.model_validate(data)
