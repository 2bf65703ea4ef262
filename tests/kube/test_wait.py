"""`pod_lost` and `pod_problem`: which pods must be created anew, and which will never be ready."""

from __future__ import annotations

from typing import Any

from plimsoll.kube.wait import oom_killed, pod_lost, pod_problem


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


def _backing_off(last_reason: str) -> dict[str, Any]:
    # As a real kubelet reports a container between two restarts.
    return {
        "metadata": {"name": "target"},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "target",
                    "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s"}},
                    "lastState": {"terminated": {"reason": last_reason, "exitCode": 137}},
                }
            ],
        },
    }


def test_crash_loop_back_off_after_an_oom_kill_is_hope_only_when_asked() -> None:
    oom = _backing_off("OOMKilled")
    assert oom_killed(oom)
    assert pod_problem(oom) == "pod target: CrashLoopBackOff: back-off 20s"
    assert pod_problem(oom, after_oom=True) is None  # the load killed it: it comes back
    crashed = _backing_off("Error")
    assert not oom_killed(crashed)
    assert pod_problem(crashed, after_oom=True) == "pod target: CrashLoopBackOff: back-off 20s"
