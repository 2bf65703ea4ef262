"""Waiting for pods, Jobs and a namespace's quota, and reading why they are not ready yet.

Called by the Kubernetes platform after it creates each group of pods (and the
run's ResourceQuota, which the API server enforces only once it has been counted). A pod
that can never become ready (image pull failure, crash loop, a failed Job) ends
the wait at once with the Kubernetes reason and message, instead of running out
the clock; a slow one ends at the deadline with the last thing the cluster said
about it (e.g. "0/3 nodes are available: insufficient cpu").
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from plimsoll.kube.client import JOBS, PODS, RESOURCE_QUOTAS, KubeClient


class NotReadyError(RuntimeError):
    """A pod or Job did not get ready; the message is what the cluster said about it.

    The Kubernetes platform turns it into its own `NotReadyError`, so this module stays
    below the platforms and the controller can use it too.
    """


HOPELESS = {
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
}


def _condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for condition in obj.get("status", {}).get("conditions", []) or []:
        if condition.get("type") == type_:
            return dict(condition)
    return None


def pod_ready(pod: dict[str, Any]) -> bool:
    ready = _condition(pod, "Ready")
    return bool(ready and ready.get("status") == "True" and pod.get("status", {}).get("podIP"))


# The kubelet's longest restart back-off (10 s doubling to 5 min).
MAX_RESTART_BACKOFF = 300.0


def oom_killed(pod: dict[str, Any]) -> bool:
    """Whether a container of the pod last ended OOMKilled."""
    for container in pod.get("status", {}).get("containerStatuses", []) or []:
        ended = (container.get("lastState") or {}).get("terminated") or {}
        if ended.get("reason") == "OOMKilled":
            return True
    return False


def pod_problem(pod: dict[str, Any], *, after_oom: bool = False) -> str | None:
    """Why this pod will never become ready, or None while there is hope. With
    `after_oom`, a container OOM-killed by the load it was given is in CrashLoopBackOff
    only until the kubelet's back-off ends: it will run again, so that is hope."""
    status = pod.get("status", {}) or {}
    name = pod.get("metadata", {}).get("name", "?")
    if status.get("phase") in ("Failed", "Succeeded"):
        return f"pod {name} stopped (phase {status['phase']}): {status.get('message', '')}".rstrip(
            ": "
        )
    for container in status.get("containerStatuses", []) or []:
        waiting = (container.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        if reason == "CrashLoopBackOff" and after_oom and oom_killed(pod):
            continue
        if reason in HOPELESS:
            return f"pod {name}: {waiting['reason']}: {waiting.get('message', '')}".rstrip(": ")
    return None


def pod_lost(pod: dict[str, Any] | None) -> str | None:
    """Why a pod of ours will not serve again without being created anew (missing, being
    deleted or evicted, ended), or None while it is there or the kubelet can restart it."""
    if pod is None:
        return "is missing (deleted)"
    meta, status = pod.get("metadata", {}) or {}, pod.get("status", {}) or {}
    if meta.get("deletionTimestamp"):
        return "is being deleted"
    if status.get("phase") in ("Failed", "Succeeded"):
        why = ": ".join(str(p) for p in (status.get("reason"), status.get("message")) if p)
        return f"stopped (phase {status['phase']}{', ' + why if why else ''})"
    return None


def last_termination(pod: dict[str, Any]) -> str | None:
    """How the pod's first container last ended ("last exit: OOMKilled, code 137, ..."),
    which tells why a restarting target is not ready, or None if it never ended."""
    for container in pod.get("status", {}).get("containerStatuses", []) or []:
        ended = (container.get("lastState") or {}).get("terminated") or {}
        if ended:
            detail = ", ".join(
                str(part)
                for part in (
                    ended.get("reason"),
                    f"code {ended['exitCode']}" if "exitCode" in ended else None,
                    f"{container.get('restartCount', 0)} restarts",
                    ended.get("message"),
                )
                if part
            )
            return f"last exit of {container.get('name', '?')}: {detail}"
    return None


def pod_pending_reason(pod: dict[str, Any]) -> str:
    name = pod.get("metadata", {}).get("name", "?")
    scheduled = _condition(pod, "PodScheduled")
    if scheduled and scheduled.get("status") == "False":
        return f"pod {name} not scheduled: {scheduled.get('message', scheduled.get('reason', ''))}"
    return f"pod {name} not ready (phase {pod.get('status', {}).get('phase', 'unknown')})"


async def wait_pods_ready(
    client: KubeClient,
    namespace: str,
    names: list[str],
    limit: float,
    poll: float = 0.5,
    *,
    after_oom: bool = False,
) -> dict[str, dict[str, Any]]:
    """The pods, once every one is Ready with an IP; NotReadyError if one cannot be
    (`after_oom`: see `pod_problem`)."""
    deadline = time.monotonic() + limit
    while True:
        pods: dict[str, dict[str, Any]] = {}
        waiting: list[str] = []
        for name in names:
            pod = await client.get(PODS, namespace, name)
            if pod is None:
                raise NotReadyError(f"pod {name} in {namespace} vanished while starting")
            problem = pod_problem(pod, after_oom=after_oom)
            if problem is not None:
                raise NotReadyError(problem)
            pods[name] = pod
            if not pod_ready(pod):
                waiting.append(pod_pending_reason(pod))
        if not waiting:
            return pods
        if time.monotonic() > deadline:
            raise NotReadyError(f"not ready after {limit:.0f}s: " + "; ".join(waiting))
        await asyncio.sleep(poll)


async def wait_selected_ready(
    client: KubeClient,
    namespace: str,
    labels: dict[str, str],
    count: int,
    limit: float,
    poll: float = 0.5,
) -> list[dict[str, Any]]:
    """The ready pods with these labels, once there are `count` of them: a controller's
    pods, whose names are not known beforehand. A pod that can never be ready ends the
    wait at once, as in `wait_pods_ready`; one being deleted is not counted."""
    deadline = time.monotonic() + limit
    while True:
        listed = await client.list(PODS, namespace, labels)
        live = [p for p in listed if not p.get("metadata", {}).get("deletionTimestamp")]
        for pod in live:
            problem = pod_problem(pod)
            if problem is not None:
                raise NotReadyError(problem)
        ready = [pod for pod in live if pod_ready(pod)]
        if len(ready) >= count:
            return sorted(ready, key=lambda pod: str(pod["metadata"]["name"]))
        if time.monotonic() > deadline:
            waiting = [pod_pending_reason(pod) for pod in live if not pod_ready(pod)]
            raise NotReadyError(
                f"{len(ready)} of {count} pods ready after {limit:.0f}s"
                + (": " + "; ".join(waiting) if waiting else "")
            )
        await asyncio.sleep(poll)


async def wait_job_done(
    client: KubeClient, namespace: str, name: str, limit: float, poll: float = 0.5
) -> None:
    deadline = time.monotonic() + limit
    while True:
        job = await client.get(JOBS, namespace, name)
        if job is None:
            raise NotReadyError(f"setup job {name} in {namespace} vanished")
        status = job.get("status", {}) or {}
        if (status.get("succeeded") or 0) >= 1:
            return
        failed = _condition(job, "Failed")
        if (status.get("failed") or 0) >= 1 or (failed and failed.get("status") == "True"):
            reason = (failed or {}).get("message", "its pod failed")
            raise NotReadyError(f"setup job {name} failed: {reason}")
        if time.monotonic() > deadline:
            raise NotReadyError(f"setup job {name} did not finish within {limit:.0f}s")
        await asyncio.sleep(poll)


async def wait_quota_counted(
    client: KubeClient, namespace: str, quota: dict[str, Any], limit: float, poll: float
) -> None:
    """Until the quota controller has counted the namespace: before that the API
    server refuses every pod ("status unknown for quota"). `quota` is the object as
    created or adopted; a NotReadyError after `limit` seconds."""
    name = quota["metadata"]["name"]
    deadline = time.monotonic() + limit
    while not (quota.get("status") or {}).get("hard"):
        if time.monotonic() > deadline:
            raise NotReadyError(
                f"ResourceQuota {namespace}/{name} was not counted by the quota "
                f"controller within {limit:g} s: is kube-controller-manager running?"
            )
        await asyncio.sleep(poll)
        quota = await client.get(RESOURCE_QUOTAS, namespace, name) or {}
