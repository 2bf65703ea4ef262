"""The one ValidationError formatter: paths as the user wrote them, messages that say the fix."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from plimsoll.api.resource import CapacityTest
from plimsoll.api.upstream import Upstream
from plimsoll.api.validation_errors import (
    describe_validation_error,
    field_problems,
    one_line,
)


def _error(model: type[CapacityTest] | type[Upstream], document: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(document)
    return caught.value


def test_paths_keep_list_indices_and_messages_name_the_fix() -> None:
    error = _error(
        Upstream,
        {"routes": [{"name": "a", "path": "/a"}, {"name": "b", "path": "no slash", "colour": 1}]},
    )
    problems = {p.field: p.message for p in field_problems(error)}
    assert "routes[1].colour" in problems
    assert problems["routes[1].colour"].startswith("unknown field")
    assert "percent-encode" in problems["routes[1].path"]


def test_the_document_itself_and_a_literal_are_named() -> None:
    error = _error(CapacityTest, {"apiVersion": "v0", "kind": "CapacityTest", "metadata": {}})
    lines = describe_validation_error(error)
    assert "apiVersion: found 'v0': must be 'plimsoll.dev/v1alpha1'" in lines
    assert "metadata.name: required field is missing" in lines
    assert describe_validation_error(_error(Upstream, 3), whole="(top level)")[0].startswith(
        "(top level): "
    )


def test_one_line_joins_a_validation_error_and_passes_a_plain_one_through() -> None:
    error = _error(Upstream, {"routes": [{"name": "a", "path": "x"}], "colour": 1})
    assert one_line(error) == "; ".join(describe_validation_error(error, whole="(value)"))
    assert "; " in one_line(error)
    assert one_line(ValueError("plain words")) == "plain words"
