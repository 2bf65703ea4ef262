"""The input boundary cannot raise: a property test over specs drawn from the CRD schema.

Documents are drawn from the generated openAPIV3Schema and then mutated
(`tests.api.schema_strategies`). Through `load_capacity_test` (the CLI and the
operator's one entry) and through the operator's own load-and-plan path
(`Supervisor._load` and `desired`, on a JSON body as the API server sends it) each
either validates or yields `SpecError` lines whose field paths exist in the input (for a
missing field, its parent does). Nothing else may escape.
"""

from __future__ import annotations

import datetime
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from plimsoll.api.resource import SpecError, load_capacity_test
from plimsoll.controller.context import OperatorContext
from plimsoll.controller.supervisor import Supervisor
from tests.api.schema_strategies import hostile_capacity_tests

# 100 examples per property in `make test` (about 10 s each); bench/bad_inputs.py runs more
# and reports how many.
EXAMPLES = int(os.environ.get("PLIMSOLL_PROPERTY_EXAMPLES", "100"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same examples every run: a failure here is reproducible
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)


def _key_as_written(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, datetime.date):
        return key.isoformat()
    return str(key)


def _resolves(node: Any, rest: str, missing_ok: bool = True) -> bool:
    """Does the field path `rest` lead into `node`? Keys may hold dots (labels), so each
    mapping tries every key the path starts with; the last part may be absent (a
    required field that is missing)."""
    if rest == "":
        return True
    if rest.startswith("["):
        close = rest.find("]")
        index, after = rest[1:close], rest[close + 1 :]
        if not isinstance(node, list) or not index.isdigit():
            return False
        if int(index) >= len(node):
            return missing_ok and after == ""
        return _resolves(node[int(index)], after.removeprefix("."), missing_ok)
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        written = _key_as_written(key)
        if rest == written:
            return True
        if rest.startswith(written) and rest[len(written)] in ".[":
            after = rest[len(written) :].removeprefix(".")
            if _resolves(value, after, missing_ok):
                return True
    # the last segment is a field that is absent (missing, or named by a cross-check)
    return missing_ok and "." not in rest and "[" not in rest


def _path_of(line: str) -> str:
    return line.split(": ", 1)[0]


def check_answer(document: dict[str, Any], problems: list[str]) -> None:
    assert problems, "a SpecError with no lines"
    for line in problems:
        assert "could not be checked" not in line, line  # the boundary's own bug report
        path = _path_of(line)
        assert path == "(document)" or _resolves(document, path), (line, document)


@given(hostile_capacity_tests())
@PROPERTY
def test_load_capacity_test_validates_or_names_fields_that_exist(
    document: dict[str, Any],
) -> None:
    try:
        load_capacity_test(document)
    except SpecError as exc:
        check_answer(document, exc.problems)


def _json_body(document: dict[str, Any]) -> dict[str, Any] | None:
    """The document as the API server would hand it over, or None when JSON cannot hold it
    (kubectl cannot send such a document at all)."""
    try:
        body = json.loads(json.dumps(document, allow_nan=False))
    except (TypeError, ValueError):
        return None
    if not isinstance(body.get("metadata"), dict):
        return None  # the API server itself refuses a body without metadata
    body["metadata"].update(namespace="default", uid="u-1", generation=1)
    return body


@given(hostile_capacity_tests())
@PROPERTY
def test_the_operator_load_and_plan_path_never_raises(document: dict[str, Any]) -> None:
    body = _json_body(document)
    if body is None:
        return
    supervisor = Supervisor(OperatorContext(), body, stopped=None)
    desired = supervisor.desired()
    test, problems = supervisor._load()
    assert (test is None) == bool(problems)
    assert desired.generation == 1
    if problems:
        check_answer(body, problems)


@pytest.mark.parametrize(
    "body",
    [
        {"spec": {"schedule": {"cron": "0 0 30 2 *"}}},
        {"spec": {"schedule": {"cron": 5}}},
        {"spec": {"schedule": "daily"}},
        {"spec": 7},
    ],
    ids=["never-fires", "cron-a-number", "schedule-text", "spec-a-number"],
)
def test_a_schedule_that_cannot_be_planned_is_a_spec_problem(body: dict[str, Any]) -> None:
    body = {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": "x", "namespace": "default", "uid": "u", "generation": 1},
        **body,
        "status": {"phase": "Succeeded", "startTime": "2026-01-01T00:00:00Z"},
    }
    supervisor = Supervisor(OperatorContext(), body, stopped=None)
    supervisor.desired()
    test, problems = supervisor._load()
    assert test is None
    assert any(p.startswith("spec") for p in problems), problems
