"""Warnings for workloads that are valid but miss what their seed models."""

from __future__ import annotations

from typing import Any

from plimsoll.api.workload import Workload
from plimsoll.decide.workload_advice import workload_warnings

CALL = {"name": "tool-call", "kind": "call", "tool": "search"}


def workload(mix: list[dict[str, Any]], **users: Any) -> Workload:
    return Workload.model_validate(
        {"protocol": "mcp", "model": "users", "mix": mix, "users": users}
    )


def test_only_calls_with_the_default_page_path_is_warned() -> None:
    (warning,) = workload_warnings(workload([CALL]))
    assert "users.pageViewPath" in warning
    assert "5% of calls" in warning


def test_a_named_page_a_page_mix_or_no_page_views_is_not_warned() -> None:
    assert workload_warnings(workload([CALL], pageViewPath="/dashboard")) == []
    assert workload_warnings(workload([CALL, {"name": "home", "path": "/home"}])) == []
    assert workload_warnings(workload([CALL], pageViewFraction=0)) == []
    # A list is not only calls either: its author shaped the mix.
    listing = {"name": "list", "kind": "list"}
    assert workload_warnings(workload([CALL, listing])) == []


def test_other_models_are_not_warned() -> None:
    assert workload_warnings(Workload.model_validate({"mix": [{"name": "get"}]})) == []
