"""The cluster's HPA controller through a flight (issue 57), watched rather than simulated.

On Kubernetes a flight's target is a Deployment with its HPA beside it
(`plimsoll.kube.autoscaled`), and kube-controller-manager does the scaling. Plimsoll
only looks, once a second through the flight: the Deployment's ready replicas, the
HPA's desired count and the CPU utilization it last read (`status.currentMetrics`, what
metrics-server served it), and each pod the flight added, from its creation to its
Ready condition. The log it hands back is the one the local simulation writes, so the
flight is judged, and its HPA recommended, by the same code on both platforms.

A failed read (the API server restarting) is skipped: the next look sees the state.
The loop is bounded by the flight's length.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from plimsoll.api.autoscale import FlightLog, ReplicaCount, UtilizationReading
from plimsoll.kube.client import (
    DEPLOYMENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    PODS,
    KubeClient,
    KubeError,
)
from plimsoll.kube.wait import pod_ready

log = logging.getLogger(__name__)

LOOK_EVERY = 1.0  # seconds; the HPA itself syncs every 15 s by default


def replica_count(at: float, deployment: dict[str, Any], hpa: dict[str, Any]) -> ReplicaCount:
    """The replicas serving (the Deployment's ready ones) and wanted (the HPA's desired
    count, else the Deployment's own) at `at` seconds into the flight."""
    ready = (deployment.get("status") or {}).get("readyReplicas") or 0
    desired = (hpa.get("status") or {}).get("desiredReplicas")
    if desired is None:
        desired = (deployment.get("spec") or {}).get("replicas") or ready
    return ReplicaCount(at=at, ready=int(ready), desired=int(desired))


def utilization_of(at: float, hpa: dict[str, Any]) -> UtilizationReading | None:
    """The CPU utilization the HPA last read (its `currentMetrics`), a share of the
    request, over its current replicas; None before its first reading."""
    status = hpa.get("status") or {}
    for metric in status.get("currentMetrics") or []:
        resource = metric.get("resource") or {}
        value = (resource.get("current") or {}).get("averageUtilization")
        if metric.get("type") == "Resource" and resource.get("name") == "cpu" and value is not None:
            ready = int(status.get("currentReplicas") or 0)
            return UtilizationReading(at=at, ready=ready, utilization=float(value) / 100)
    return None


def _timestamp(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def start_seconds(pod: dict[str, Any]) -> float | None:
    """From the pod's creation to its Ready condition, seconds (whole seconds: the API
    server's timestamps have no finer grain); None while it is not ready."""
    if not pod_ready(pod):
        return None
    created = _timestamp(pod.get("metadata", {}).get("creationTimestamp"))
    conditions = (pod.get("status") or {}).get("conditions") or []
    ready: dict[str, Any] = next((c for c in conditions if c.get("type") == "Ready"), {})
    became = _timestamp(ready.get("lastTransitionTime"))
    if created is None or became is None:
        return None
    return max(0.0, (became - created).total_seconds())


@dataclass
class WatchedHpa:
    client: KubeClient
    namespace: str
    name: str  # the Deployment's and its HPA's
    selector: dict[str, str]  # the Deployment's pods
    clock: Callable[[], float] = time.monotonic
    every: float = LOOK_EVERY
    _replicas: list[ReplicaCount] = field(default_factory=list)
    _readings: list[UtilizationReading] = field(default_factory=list)
    _starts: dict[str, float] = field(default_factory=dict)
    _before: set[str] = field(default_factory=set)  # serving before the flight began

    def log(self) -> FlightLog:
        return FlightLog(
            replicas=list(self._replicas),
            readings=list(self._readings),
            starts=list(self._starts.values()),
            controller="cluster",
        )

    async def run(self, seconds: float) -> None:
        self._replicas, self._readings, self._starts = [], [], {}
        origin = self.clock()
        self._before = {pod["metadata"]["name"] for pod in await self._pods()}
        while (at := self.clock() - origin) < seconds:
            try:
                await self._look(at)
            except KubeError as exc:
                log.warning("flight: the HPA not read at %.0f s: %s", at, exc.message)
            await asyncio.sleep(max(0.0, min(self.every, seconds - (self.clock() - origin))))

    async def _pods(self) -> list[dict[str, Any]]:
        return await self.client.list(PODS, self.namespace, self.selector)

    async def _look(self, at: float) -> None:
        client, namespace = self.client, self.namespace
        deployment = await client.get(DEPLOYMENTS, namespace, self.name) or {}
        hpa = await client.get(HORIZONTAL_POD_AUTOSCALERS, namespace, self.name) or {}
        count = replica_count(at, deployment, hpa)
        last = self._replicas[-1] if self._replicas else None
        if last is None or (last.ready, last.desired) != (count.ready, count.desired):
            self._replicas.append(count)
        reading = utilization_of(at, hpa)
        seen = self._readings[-1] if self._readings else None
        if reading is not None and (
            seen is None or (seen.ready, seen.utilization) != (reading.ready, reading.utilization)
        ):
            self._readings.append(reading)
        for pod in await self._pods():
            name = pod["metadata"]["name"]
            if name in self._before or name in self._starts:
                continue
            started = start_seconds(pod)
            if started is not None:
                self._starts[name] = started
