"""`pod_lost`: which of the run's pods must be created anew before the next trial."""

from __future__ import annotations

from typing import Any

from plimsoll.kube.wait import pod_lost


def _pod(phase: str, **extra: Any) -> dict[str, Any]:
    meta = extra.pop("metadata", {"name": "generator-0"})
    return {"metadata": meta, "status": {"phase": phase, **extra}}


def test_a_running_or_pending_pod_is_not_lost() -> None:
    assert pod_lost(_pod("Running")) is None
    assert pod_lost(_pod("Pending")) is None  # scheduled, starting: the wait covers it


def test_a_missing_pod_is_lost() -> None:
    assert pod_lost(None) == "is missing (deleted)"


def test_a_pod_being_deleted_is_lost_even_while_still_running() -> None:
    meta = {"name": "mock-0", "deletionTimestamp": "2026-01-01T00:00:00Z"}
    assert pod_lost(_pod("Running", metadata=meta)) == "is being deleted"


def test_an_evicted_pod_is_lost_with_the_kubelet_reason() -> None:
    evicted = _pod("Failed", reason="Evicted", message="The node was low on resource: memory.")
    assert pod_lost(evicted) == (
        "stopped (phase Failed, Evicted: The node was low on resource: memory.)"
    )
    assert pod_lost(_pod("Succeeded")) == "stopped (phase Succeeded)"
