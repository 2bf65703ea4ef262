"""A small async client for the Kubernetes API: create-or-adopt, get, list, patch, delete.

Used by the Kubernetes platform (the run's children) and the operator (status,
report ConfigMap, namespace cleanup). It speaks plain JSON over httpx with the
credentials kopf logged in with (`from_connection` takes kopf's ConnectionInfo),
so the operator and its runs use one identity and one set of RBAC rules.
Errors are translated here, at the boundary: `NotFoundError`, `ConflictError`, or
`KubeError` carrying the API server's status and message.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any

import httpx

MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}


class KubeError(RuntimeError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Kubernetes API answered {status}: {message}")
        self.status = status
        self.message = message


class NotFoundError(KubeError):
    pass


class ConflictError(KubeError):
    pass


@dataclass(frozen=True)
class Kind:
    api_version: str  # "v1" or "group/version"
    plural: str
    namespaced: bool = True

    def base(self) -> str:
        return (
            f"/api/{self.api_version}"
            if "/" not in self.api_version
            else f"/apis/{self.api_version}"
        )


NAMESPACES = Kind("v1", "namespaces", namespaced=False)
PODS = Kind("v1", "pods")
SERVICES = Kind("v1", "services")
CONFIG_MAPS = Kind("v1", "configmaps")
SECRETS = Kind("v1", "secrets")
JOBS = Kind("batch/v1", "jobs")
NETWORK_POLICIES = Kind("networking.k8s.io/v1", "networkpolicies")
CAPACITY_TESTS = Kind("plimsoll.dev/v1alpha1", "capacitytests")
EVENTS = Kind("v1", "events")

KINDS_BY_API_KIND = {
    ("v1", "Namespace"): NAMESPACES,
    ("v1", "Pod"): PODS,
    ("v1", "Service"): SERVICES,
    ("v1", "Secret"): SECRETS,
    ("v1", "ConfigMap"): CONFIG_MAPS,
    ("v1", "Event"): EVENTS,
    ("batch/v1", "Job"): JOBS,
    ("networking.k8s.io/v1", "NetworkPolicy"): NETWORK_POLICIES,
}


def kind_of(body: dict[str, Any]) -> Kind:
    return KINDS_BY_API_KIND[(body["apiVersion"], body["kind"])]


def _matches(labels: dict[str, str] | None, wanted: dict[str, str]) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in wanted.items())


def _write_temp(data: str | bytes, suffix: str) -> str:
    import base64

    raw = data.encode() if isinstance(data, str) else data
    try:  # kubeconfig's *-data fields are base64; kopf may pass them decoded or not
        decoded = base64.b64decode(raw, validate=True)
        if b"-----BEGIN" in decoded:
            raw = decoded
    except ValueError:
        pass
    handle, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(handle, "wb") as file:
        file.write(raw)
    return path


class KubeClient:
    def __init__(
        self, server: str, *, headers: dict[str, str] | None = None, verify: Any = True
    ) -> None:
        self.server = server.rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.server, headers=headers or {}, verify=verify, timeout=30.0
        )
        self._subresources: dict[tuple[str, str], bool] = {}

    @classmethod
    def from_connection(cls, info: Any) -> KubeClient:
        """From kopf's `ConnectionInfo` (duck-typed: kopf is not imported here)."""
        headers: dict[str, str] = {}
        if info.token:
            headers["Authorization"] = f"{info.scheme or 'Bearer'} {info.token}"
        verify: Any = True
        if str(info.server).startswith("https"):
            context = ssl.create_default_context()
            if info.insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            if info.ca_path:
                context.load_verify_locations(cafile=os.fspath(info.ca_path))
            elif info.ca_data:
                context.load_verify_locations(cafile=_write_temp(info.ca_data, ".crt"))
            cert = info.certificate_path or (
                _write_temp(info.certificate_data, ".crt") if info.certificate_data else None
            )
            key = info.private_key_path or (
                _write_temp(info.private_key_data, ".key") if info.private_key_data else None
            )
            if cert:
                context.load_cert_chain(os.fspath(cert), os.fspath(key) if key else None)
            verify = context
        client = cls(str(info.server), headers=headers, verify=verify)
        if info.username and info.password:
            client._http.auth = httpx.BasicAuth(info.username, info.password)
        return client

    async def aclose(self) -> None:
        await self._http.aclose()

    @staticmethod
    def path(
        kind: Kind, namespace: str | None, name: str | None = None, sub: str | None = None
    ) -> str:
        path = kind.base()
        if kind.namespaced and namespace:
            path += f"/namespaces/{namespace}"
        path += f"/{kind.plural}"
        if name:
            path += f"/{name}"
        if sub:
            path += f"/{sub}"
        return path

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise KubeError(0, f"{method} {path}: {exc}") from exc
        if response.status_code >= 400:
            try:
                message = str(response.json().get("message", response.text))
            except ValueError:
                message = response.text
            error = {404: NotFoundError, 409: ConflictError}.get(response.status_code, KubeError)
            raise error(response.status_code, f"{method} {path}: {message[:300]}")
        body = response.json() if response.content else {}
        return body if isinstance(body, dict) else {}

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        kind = kind_of(body)
        return await self._call(
            "POST", self.path(kind, body["metadata"].get("namespace")), json=body
        )

    async def get(self, kind: Kind, namespace: str | None, name: str) -> dict[str, Any] | None:
        try:
            return await self._call("GET", self.path(kind, namespace, name))
        except NotFoundError:
            return None

    async def list(
        self, kind: Kind, namespace: str | None, labels: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        wanted = labels or {}
        params = (
            {"labelSelector": ",".join(f"{k}={v}" for k, v in wanted.items())} if wanted else {}
        )
        body = await self._call("GET", self.path(kind, namespace), params=params)
        # Filtered again here: a server that ignored the selector must not widen a delete.
        items = [
            i
            for i in body.get("items", [])
            if _matches(i.get("metadata", {}).get("labels"), wanted)
        ]
        if namespace and kind.namespaced:
            items = [
                i for i in items if i.get("metadata", {}).get("namespace") in (None, namespace)
            ]
        return items

    async def patch(
        self,
        kind: Kind,
        namespace: str | None,
        name: str,
        body: dict[str, Any],
        sub: str | None = None,
    ) -> dict[str, Any]:
        return await self._call(
            "PATCH", self.path(kind, namespace, name, sub), json=body, headers=MERGE_PATCH
        )

    async def delete(self, kind: Kind, namespace: str | None, name: str) -> bool:
        """Delete (children in the background); False when it was already gone."""
        options = {"propagationPolicy": "Background"}
        try:
            await self._call("DELETE", self.path(kind, namespace, name), params=options)
        except NotFoundError:
            return False
        return True

    async def has_subresource(self, kind: Kind, sub: str) -> bool:
        """From discovery: does the server serve `plural/sub` (e.g. the status subresource)?"""
        key = (kind.api_version, f"{kind.plural}/{sub}")
        if key not in self._subresources:
            try:
                body = await self._call("GET", kind.base())
                names = {r.get("name") for r in body.get("resources", [])}
            except KubeError:
                names = set()
            self._subresources[key] = key[1] in names
        return self._subresources[key]

    async def proxy(
        self,
        method: str,
        namespace: str,
        pod: str,
        port: int,
        rest: str,
        content: bytes,
        headers: dict[str, str],
    ) -> httpx.Response:
        """A request to a pod through the API server's pod proxy (when not in the cluster)."""
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}:{port}/proxy/{rest.lstrip('/')}"
        return await self._http.request(method, path, content=content, headers=headers)
