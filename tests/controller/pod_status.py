"""Pod status as a kubelet reports it: phase, conditions, IPs and the container's state.

Pure functions of what the test kubelet (`real_kubelet.py`) knows about one
container process, so the body it patches into `pods/{name}/status` is built in
one place. The real API server validates these (timestamps, podIPs matching
podIP, a terminal phase never left), which the emulated one never did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class ContainerState:
    name: str
    image: str
    ip: str
    started_at: str
    pid: int
    ready: bool = False
    changed_at: str = ""  # when `ready` last flipped: the Ready condition's transition time
    restarts: int = 0
    last_terminated: dict[str, Any] | None = None  # lastState.terminated
    ended: dict[str, Any] | None = None  # state.terminated, when the pod is over


def terminated(exit_code: int, reason: str, started_at: str, finished_at: str) -> dict[str, Any]:
    return {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": started_at,
        "finishedAt": finished_at,
    }


def _condition(kind: str, ok: bool, since: str) -> dict[str, Any]:
    return {"type": kind, "status": "True" if ok else "False", "lastTransitionTime": since}


def pod_status(state: ContainerState, phase: str, since: str) -> dict[str, Any]:
    running = state.ended is None
    container: dict[str, Any] = {
        "name": state.name,
        "image": state.image,
        "imageID": f"test-kubelet://{state.image}",
        "containerID": f"test-kubelet://{state.pid}",
        "ready": state.ready and running,
        "started": running,
        "restartCount": state.restarts,
        "state": (
            {"running": {"startedAt": state.started_at}} if running else {"terminated": state.ended}
        ),
        "lastState": {"terminated": state.last_terminated} if state.last_terminated else {},
    }
    ready = state.ready and running
    flipped = state.changed_at or since
    return {
        "phase": phase,
        "conditions": [
            _condition("PodScheduled", True, since),
            _condition("Initialized", True, since),
            _condition("ContainersReady", ready, flipped),
            _condition("Ready", ready, flipped),
        ],
        "hostIP": "127.0.0.1",
        "hostIPs": [{"ip": "127.0.0.1"}],
        "podIP": state.ip,
        "podIPs": [{"ip": state.ip}],
        "startTime": since,
        "containerStatuses": [container],
    }
