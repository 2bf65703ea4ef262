"""A container's environment as a kubelet resolves it, read from the real API server.

Values with `$(VAR)` expansion, the downward API (`status.podIP`, the pod's name
and namespace) and ConfigMap keys; and, standing in for cluster DNS, a Service
name the operator injected (`svc.ns.svc[:port]`) is replaced by the IP of a ready
pod the Service selects, or, given `ServiceProxies` (kube-proxy's stand-in), by the
Service's own stable address. None means "not yet" (a ConfigMap or a ready backend
is missing): a kubelet keeps the pod waiting and tries again.
"""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

from tests.controller.admin_api import AdminApi

if TYPE_CHECKING:  # it imports `backend_ip` from here
    from tests.controller.service_proxy import ServiceProxies

SERVICE_NAME = re.compile(r"\b([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?(?::(\d+))?")
VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def expand(value: str, env: dict[str, str]) -> str:
    return VAR.sub(lambda m: env.get(m.group(1), m.group(0)), value)


def _ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    return ready and bool(pod["status"].get("podIP"))


async def ready_ips(api: AdminApi, service: str, namespace: str) -> list[str]:
    """The IPs of the ready pods behind the Service, by pod name."""
    found = await api.get(f"/api/v1/namespaces/{namespace}/services/{service}")
    if found is None:
        return []
    selector = ",".join(f"{k}={v}" for k, v in found["spec"].get("selector", {}).items())
    pods = await api.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector)
    ready = sorted((p for p in pods if _ready(p)), key=lambda p: p["metadata"]["name"])
    return [str(p["status"]["podIP"]) for p in ready]


async def backend_ip(api: AdminApi, service: str, namespace: str) -> str | None:
    """The IP of a ready pod behind the Service, or None."""
    ips = await ready_ips(api, service, namespace)
    return ips[0] if ips else None


async def dns(api: AdminApi, value: str, services: ServiceProxies | None = None) -> str | None:
    out, last = [], 0
    for match in SERVICE_NAME.finditer(value):
        service, namespace, port = match.group(1), match.group(2), match.group(3)
        if services is not None and port:
            ip = await services.address(namespace, service, int(port))
        else:
            ip = await backend_ip(api, service, namespace)
        if ip is None:
            return None
        port = match.group(3)
        out += [value[last : match.start()], ip + (f":{port}" if port else "")]
        last = match.end()
    return "".join([*out, value[last:]])


async def resolve(
    api: AdminApi,
    pod: dict[str, Any],
    ip: str,
    container: dict[str, Any],
    services: ServiceProxies | None = None,
) -> dict[str, str] | None:
    meta = pod["metadata"]
    env: dict[str, str] = {}
    for item in container.get("env", []):
        if "value" in item:
            value = expand(item["value"], env)
        else:
            ref = item["valueFrom"]
            if "fieldRef" in ref:
                fields = {
                    "status.podIP": ip,
                    "metadata.name": meta["name"],
                    "metadata.namespace": meta["namespace"],
                }
                value = fields[ref["fieldRef"]["fieldPath"]]
            elif "secretKeyRef" in ref:  # the run's control token
                key = ref["secretKeyRef"]
                path = f"/api/v1/namespaces/{meta['namespace']}/secrets/{key['name']}"
                secret = await api.get(path)
                if secret is None:
                    return None  # a kubelet waits for the Secret too
                value = base64.b64decode(secret["data"][key["key"]]).decode()
            else:
                key = ref["configMapKeyRef"]
                path = f"/api/v1/namespaces/{meta['namespace']}/configmaps/{key['name']}"
                config_map = await api.get(path)
                if config_map is None:
                    return None
                value = config_map["data"][key["key"]]
        resolved = await dns(api, value, services)
        if resolved is None:
            return None
        env[item["name"]] = resolved
    return env
