"""Restarts and OOM kills within a window, from pod status as a real kubelet writes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from plimsoll.metrics.source import Window
from plimsoll.platforms.kubernetes.pod_restarts import count_in_window

T0 = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(seconds=30))


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


RUNNING = {"running": {"startedAt": (T0 - timedelta(seconds=4)).strftime("%Y-%m-%dT%H:%M:%SZ")}}


def pod(name: str, *containers: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"containerStatuses": list(containers)}}


def container(name: str, restarts: int, **states: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "restartCount": restarts, **states}


def ended(at: float, reason: str) -> dict[str, Any]:
    return {"terminated": {"finishedAt": _at(at), "reason": reason, "exitCode": 137}}


def test_a_termination_inside_the_window_counts_and_an_oom_kill_is_named() -> None:
    pods = [
        pod("target-0", container("target", 1, lastState=ended(10, "OOMKilled"))),
        pod("mock-0", container("mock", 3, lastState=ended(12, "Error"))),
    ]
    assert count_in_window(pods, "target-.*", "target", WINDOW) == (1, 1)
    assert count_in_window(pods, "mock-.*", None, WINDOW) == (1, 0)
    assert count_in_window(pods, ".+", None, WINDOW) == (2, 1)


def test_terminations_before_or_after_the_window_do_not_count() -> None:
    pods = [
        pod("target-0", container("target", 4, state=RUNNING, lastState=ended(-5, "OOMKilled"))),
        pod("target-1", container("target", 1, state=RUNNING, lastState=ended(31, "Error"))),
        pod("target-2", container("target", 0, state={"running": {"startedAt": _at(-60)}})),
    ]
    assert count_in_window(pods, "target-.*", "target", WINDOW) == (0, 0)


def test_a_container_waiting_to_restart_shows_its_current_termination() -> None:
    # CrashLoopBackOff: the kubelet has not started it again, so the death is in `state`.
    pods = [pod("target-0", container("target", 2, state=ended(20, "OOMKilled")))]
    assert count_in_window(pods, "target-0", "target", WINDOW) == (1, 1)


def test_a_container_down_through_the_window_counts_though_it_died_before() -> None:
    # OOM-killed in the warm-up, in back-off for the whole window: the target was dead.
    waiting = {"waiting": {"reason": "CrashLoopBackOff"}}
    pods = [
        pod("target-0", container("target", 3, state=waiting, lastState=ended(-2, "OOMKilled")))
    ]
    assert count_in_window(pods, "target-0", "target", WINDOW) == (1, 1)
    # Restarted inside the window after dying before it: down at its start.
    late = {"running": {"startedAt": _at(8)}}
    pods = [pod("target-0", container("target", 1, state=late, lastState=ended(-2, "Error")))]
    assert count_in_window(pods, "target-0", "target", WINDOW) == (1, 0)


def test_other_containers_and_pods_are_not_the_role() -> None:
    pods = [
        pod("target-0", container("sidecar", 1, lastState=ended(10, "Error"))),
        pod("other-0", container("target", 1, lastState=ended(10, "Error"))),
        {"metadata": {"name": "target-1"}, "status": {}},  # not started yet
    ]
    assert count_in_window(pods, "target-.*", "target", WINDOW) == (0, 0)
