"""What Plimsoll reads of the cluster's HPA through a flight: the replicas serving and
wanted, the CPU utilization the HPA read, and each new pod's start, from the objects as
the API server returns them; and the watch itself against a fake API, in fake time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plimsoll.api.autoscale import ReplicaCount
from plimsoll.kube.client import DEPLOYMENTS, HORIZONTAL_POD_AUTOSCALERS, PODS, Kind
from plimsoll.platforms.kubernetes.watched_hpa import (
    WatchedHpa,
    replica_count,
    start_seconds,
    utilization_of,
)


def _hpa(desired: int | None, utilization: int | None, current: int = 1) -> dict[str, Any]:
    status: dict[str, Any] = {"currentReplicas": current}
    if desired is not None:
        status["desiredReplicas"] = desired
    if utilization is not None:
        status["currentMetrics"] = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "current": {"averageUtilization": utilization}},
            }
        ]
    return {"status": status}


def _pod(name: str, created: str, ready_at: str | None) -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "status": {"phase": "Running", "podIP": "10.0.0.2", "conditions": conditions}
        if ready_at
        else {"phase": "Pending"},
    }


def test_the_replicas_are_the_deployments_ready_and_the_hpas_desired() -> None:
    deployment = {"spec": {"replicas": 2}, "status": {"readyReplicas": 1}}
    assert replica_count(3.0, deployment, _hpa(4, 90)) == ReplicaCount(at=3.0, ready=1, desired=4)
    # before the HPA's first sync, the Deployment's own count; a fresh one has no status
    assert replica_count(0.0, deployment, {}) == ReplicaCount(at=0.0, ready=1, desired=2)
    assert replica_count(0.0, {}, {}) == ReplicaCount(at=0.0, ready=0, desired=0)


def test_the_reading_is_the_cpu_utilization_the_hpa_last_read_as_a_share() -> None:
    reading = utilization_of(15.0, _hpa(3, 120, current=2))
    assert reading is not None
    assert (reading.at, reading.ready, reading.utilization) == (15.0, 2, 1.2)
    assert utilization_of(1.0, _hpa(1, None)) is None


def test_a_pods_start_is_from_its_creation_to_its_ready_condition() -> None:
    pod = _pod("target-abc-1", "2026-12-08T01:00:00Z", "2026-12-08T01:00:07Z")
    assert start_seconds(pod) == 7.0
    assert start_seconds(_pod("target-abc-2", "2026-12-08T01:00:00Z", None)) is None


class _FakeApi:
    """The three objects a watch reads, changed by the test between looks."""

    def __init__(self) -> None:
        self.deployment: dict[str, Any] = {"spec": {"replicas": 1}, "status": {"readyReplicas": 1}}
        self.hpa: dict[str, Any] = _hpa(1, 40)
        self.pods = [_pod("target-a-1", "2026-12-08T01:00:00Z", "2026-12-08T01:00:02Z")]

    async def get(self, kind: Kind, namespace: str, name: str) -> dict[str, Any]:
        return self.deployment if kind is DEPLOYMENTS else self.hpa

    async def list(self, kind: Kind, namespace: str, labels: dict[str, str]) -> list[Any]:
        assert kind is PODS
        assert labels == {"role": "target"}
        return list(self.pods)


@pytest.mark.looptime
async def test_the_watch_logs_each_change_and_only_the_flights_own_pods_starts() -> None:
    api = _FakeApi()
    loop = asyncio.get_running_loop()
    target = {"role": "target"}
    watch = WatchedHpa(api, "run-ns", "target", target, clock=loop.time)  # type: ignore[arg-type]
    task = asyncio.create_task(watch.run(10.0))
    await asyncio.sleep(2.5)
    api.hpa = _hpa(3, 130)
    api.deployment = {"spec": {"replicas": 3}, "status": {"readyReplicas": 1}}
    api.pods.append(_pod("target-a-2", "2026-12-08T01:01:00Z", None))
    await asyncio.sleep(2.0)
    api.pods[-1] = _pod("target-a-2", "2026-12-08T01:01:00Z", "2026-12-08T01:01:06Z")
    api.deployment = {"spec": {"replicas": 3}, "status": {"readyReplicas": 2}}
    await task
    log = watch.log()
    assert log.controller == "cluster"
    assert [(c.ready, c.desired) for c in log.replicas] == [(1, 1), (1, 3), (2, 3)]
    assert [(r.ready, r.utilization) for r in log.readings] == [(1, 0.4), (1, 1.3)]
    assert log.starts == [6.0]  # the pod serving before the flight is not the flight's
    assert all(c.at < 10.0 for c in log.replicas)
    assert HORIZONTAL_POD_AUTOSCALERS.plural == "horizontalpodautoscalers"
