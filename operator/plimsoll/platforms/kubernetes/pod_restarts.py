"""Restarts and OOM kills within a trial window, read from the pods' own status.

`KubernetesRun.metrics()` hands a `PodStatusRestarts` to the Prometheus source,
which asks it when Prometheus has no kube-state-metrics series
(`kube_pod_container_status_restarts_total`): a cluster whose Prometheus scrapes only
the kubelets' cAdvisor has none, and every step would otherwise be invalid although
the API server knows the answer. A container that terminated within the window shows
it in its status: `lastState.terminated` once the kubelet has restarted it, or
`state.terminated` while it waits to be (CrashLoopBackOff), each with `finishedAt`
and a `reason` (`OOMKilled`). `count_in_window` is the pure part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from plimsoll.kube.client import PODS, KubeClient, KubeError
from plimsoll.metrics.source import RestartsUnreadableError, Window


def _finished(terminated: dict[str, Any] | None) -> tuple[datetime, str] | None:
    if not terminated or not terminated.get("finishedAt"):
        return None
    at = datetime.fromisoformat(str(terminated["finishedAt"]).replace("Z", "+00:00"))
    return at, str(terminated.get("reason") or "")


def _down_in(status: dict[str, Any], window: Window) -> bool:
    """Whether the container was not running for part of the window: waiting (back-off)
    or ended now, or running only since a start inside the window."""
    state = status.get("state") or {}
    if "running" not in state:
        return True
    started = state["running"].get("startedAt")
    if not started:
        return False
    at = datetime.fromisoformat(str(started).replace("Z", "+00:00"))
    return at > window.start


def count_in_window(
    pods: Iterable[dict[str, Any]], pod_regex: str, container: str | None, window: Window
) -> tuple[int, int]:
    """(restarts, OOM kills) of the matching containers that terminated within `window`:
    one per container at most, the status keeps only the last termination (a container
    restarted twice in one window still makes the step invalid, which is what counts)."""
    pattern = re.compile(pod_regex)
    restarts = oom_kills = 0
    for pod in pods:
        if not pattern.fullmatch(str(pod.get("metadata", {}).get("name", ""))):
            continue
        for status in pod.get("status", {}).get("containerStatuses") or []:
            if container is not None and status.get("name") != container:
                continue
            seen = [
                _finished((status.get(key) or {}).get("terminated"))
                for key in ("lastState", "state")
            ]
            ended = [f for f in seen if f is not None and f[0] <= window.end]
            inside = [f for f in ended if f[0] >= window.start]
            if inside or (ended and _down_in(status, window)):
                # Died inside the window, or died before it and was not running through
                # it (a real kubelet's back-off after an OOM kill in the warm-up).
                restarts += 1
                oom_kills += any(reason == "OOMKilled" for _, reason in inside or ended)
    return restarts, oom_kills


class PodStatusRestarts:
    """`RestartCounter` over the pods of one run namespace."""

    def __init__(self, client: KubeClient, namespace: str, labels: dict[str, str]) -> None:
        self._client, self._namespace, self._labels = client, namespace, labels

    async def restarts(
        self, pod_regex: str, container: str | None, window: Window
    ) -> tuple[int, int]:
        try:
            pods = await self._client.list(PODS, self._namespace, self._labels)
        except KubeError as exc:
            raise RestartsUnreadableError(
                f"cannot list the pods of {self._namespace}: {exc.message}"
            ) from exc
        return count_in_window(pods, pod_regex, container, window)
