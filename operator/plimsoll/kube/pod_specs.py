"""Pieces every Plimsoll pod shares: restricted security contexts, quantities, env, merging.

Called by `plimsoll.kube.manifests` while it builds each pod. Kept apart so
the Pod Security Standards `restricted` profile is written once: every pod the
operator creates gets `pod_security()` and `container_security()`, and a test
checks each built pod against the profile's rules. Pure: no I/O.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from plimsoll.api.spec import PodShape

# Our own images run as this user (the Dockerfiles create it); user images must run
# as some non-root user too, which `restricted` demands (override via podTemplate).
NON_ROOT_UID = 65532


def pod_security(run_as_user: int | None = NON_ROOT_UID) -> dict[str, Any]:
    context: dict[str, Any] = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if run_as_user is not None:
        context["runAsUser"] = run_as_user
        context["runAsGroup"] = run_as_user
        context["fsGroup"] = run_as_user
    return context


def container_security(*, read_only_root: bool) -> dict[str, Any]:
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": read_only_root,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def cpu_quantity(cores: float) -> str:
    """Cores as Kubernetes writes them: whole cores plain, fractions in millicores."""
    millis = round(cores * 1000)
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def memory_quantity(size: int) -> str:
    for suffix, factor in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)


def guaranteed(shape: PodShape) -> dict[str, Any]:
    """requests == limits: the Guaranteed QoS class, so the pod has exactly this shape."""
    amounts = {"cpu": cpu_quantity(shape.cpu), "memory": memory_quantity(shape.memory)}
    return {"requests": dict(amounts), "limits": dict(amounts)}


def whole_cores(shape: PodShape | None) -> int:
    return max(1, math.floor(shape.cpu)) if shape is not None else 1


def pod_ip_env() -> dict[str, Any]:
    """POD_IP from the downward API: our servers bind it (`--host $(POD_IP)`)."""
    return {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def env_list(values: dict[str, str]) -> list[dict[str, Any]]:
    return [{"name": name, "value": value} for name, value in values.items()]


def tmp_volume() -> tuple[dict[str, Any], dict[str, Any]]:
    """An emptyDir for /tmp, so a read-only root filesystem still has scratch space."""
    volume = {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}
    mount = {"name": "tmp", "mountPath": "/tmp"}
    return volume, mount


def http_probe(path: str, port: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": port},
        "periodSeconds": 2,
        "timeoutSeconds": 2,
        "failureThreshold": 3,
    }


def tcp_probe(port: int) -> dict[str, Any]:
    return {"tcpSocket": {"port": port}, "periodSeconds": 2, "timeoutSeconds": 2}


def _named(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(i, dict) and "name" in i for i in items)


def merge_template(base: Any, override: Any) -> Any:
    """Merge a user's override into a built object: mappings recursively, lists of named
    items (containers, env, volumes) by name, anything else replaced by the override."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = copy.deepcopy(base)
        for key, value in override.items():
            merged[key] = merge_template(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    if isinstance(base, list) and isinstance(override, list) and _named(base) and _named(override):
        by_name = {item["name"]: item for item in base}
        merged_list = [
            merge_template(by_name[item["name"]], item) if item["name"] in by_name else item
            for item in override
        ]
        overridden = {item["name"] for item in override}
        return [item for item in base if item["name"] not in overridden] + merged_list
    return copy.deepcopy(override)
