"""A small async client for the Kubernetes API: create-or-adopt, get, list, patch, delete.

Used by the Kubernetes platform (the run's children) and the operator (status,
report ConfigMap, namespace cleanup). It speaks plain JSON over httpx with the
credentials kopf logged in with (`from_connection` takes kopf's ConnectionInfo),
so the operator and its runs use one identity and one set of RBAC rules.
Errors are translated here, at the boundary, into `plimsoll.kube.errors`:
`NotFoundError`, `ConflictError`, `UnauthorizedError`, `TemporaryKubeError` (429,
5xx, connection faults, timeouts) or `KubeError` carrying the API server's status
and message. Idempotent requests are retried on temporary faults within a
`RetryPolicy` (`plimsoll.kube.retry`); a 401 takes fresh credentials from
`relogin` (kopf's login, run again) and is retried once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from plimsoll.kube.errors import (
    ConflictError,
    KubeError,
    NotFoundError,
    TemporaryKubeError,
    UnauthorizedError,
)
from plimsoll.kube.kinds import (
    CAPACITY_TESTS,
    CONFIG_MAPS,
    EVENTS,
    JOBS,
    KINDS_BY_API_KIND,
    LIMIT_RANGES,
    NAMESPACES,
    NETWORK_POLICIES,
    PODS,
    RESOURCE_QUOTAS,
    ROLE_BINDINGS,
    SECRETS,
    SELF_SUBJECT_ACCESS_REVIEWS,
    SERVICES,
    Kind,
    kind_of,
)
from plimsoll.kube.retry import NO_RETRIES, RetryPolicy, retry_after, retrying
from plimsoll.kube.session import Session, session_of

__all__ = [
    "CAPACITY_TESTS",
    "CONFIG_MAPS",
    "EVENTS",
    "JOBS",
    "KINDS_BY_API_KIND",
    "LIMIT_RANGES",
    "NAMESPACES",
    "NETWORK_POLICIES",
    "NO_RETRIES",
    "PODS",
    "RESOURCE_QUOTAS",
    "ROLE_BINDINGS",
    "SECRETS",
    "SELF_SUBJECT_ACCESS_REVIEWS",
    "SERVICES",
    "ConflictError",
    "Kind",
    "KubeClient",
    "KubeError",
    "NotFoundError",
    "RetryPolicy",
    "TemporaryKubeError",
    "UnauthorizedError",
    "kind_of",
]

MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}

# Failures that say nothing about the request itself: the server restarted, dropped
# the connection or was too slow. Anything else from httpx is a mistake of ours.
_TRANSIENT_HTTP = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)

Relogin = Callable[[], Awaitable[Any]]  # returns a kopf ConnectionInfo, or None


def _matches(labels: dict[str, str] | None, wanted: dict[str, str]) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in wanted.items())


class KubeClient:
    def __init__(
        self,
        server: str,
        *,
        headers: dict[str, str] | None = None,
        verify: Any = True,
        auth: httpx.Auth | None = None,
        retry: RetryPolicy | None = None,
        relogin: Relogin | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.server = server.rstrip("/")
        self.retry = retry or RetryPolicy()
        self._relogin = relogin
        self._timeout = timeout
        self._http = self._open(Session(headers or {}, verify, auth))
        self._retired: list[httpx.AsyncClient] = []  # closed at aclose: requests may be in flight
        self._credentials = 0  # counts logins, so concurrent 401s re-login only once
        self._login_lock = asyncio.Lock()
        self._subresources: dict[tuple[str, str], bool] = {}

    def _open(self, session: Session) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.server,
            headers=session.headers,
            verify=session.verify,
            auth=session.auth,
            timeout=self._timeout,
        )

    @classmethod
    def from_connection(
        cls, info: Any, *, relogin: Relogin | None = None, retry: RetryPolicy | None = None
    ) -> KubeClient:
        """From kopf's `ConnectionInfo`; `relogin` gives fresh credentials after a 401."""
        session = session_of(info)
        return cls(
            str(info.server),
            headers=session.headers,
            verify=session.verify,
            auth=session.auth,
            retry=retry,
            relogin=relogin,
        )

    def use_credentials(self, info: Any) -> None:
        """Send later requests with `info`'s credentials (a token rotated, a login renewed)."""
        self._retired.append(self._http)
        self._http = self._open(session_of(info))
        self._credentials += 1

    async def _fresh_credentials(self, seen: int) -> bool:
        """After a 401 on credentials number `seen`: log in again unless another request
        already did. False when there is no way to get fresh ones."""
        async with self._login_lock:
            if self._credentials != seen:
                return True
            if self._relogin is None:
                return False
            info = await self._relogin()
            if info is None:
                return False
            self.use_credentials(info)
            return True

    async def aclose(self) -> None:
        for http in [*self._retired, self._http]:
            await http.aclose()

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

    async def _send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """One request, its failure translated; a 401 is retried once with fresh credentials."""
        for fresh in (False, True):
            seen = self._credentials
            try:
                response = await self._http.request(method, path, **kwargs)
            except _TRANSIENT_HTTP as exc:
                reason = str(exc) or type(exc).__name__
                raise TemporaryKubeError(0, f"{method} {path}: {reason}") from exc
            except httpx.HTTPError as exc:
                raise KubeError(0, f"{method} {path}: {exc}") from exc
            if response.status_code == 401 and not fresh and await self._fresh_credentials(seen):
                continue
            return _body_or_raise(method, path, response)
        raise AssertionError("unreachable: the second pass returns or raises")

    async def _call(
        self,
        method: str,
        path: str,
        *,
        idempotent: bool = True,
        retry: RetryPolicy | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        policy = (retry or self.retry) if idempotent else NO_RETRIES
        return await retrying(
            lambda: self._send(method, path, **kwargs), policy, f"{method} {path}"
        )

    async def create(
        self, body: dict[str, Any], *, retry: RetryPolicy | None = None
    ) -> dict[str, Any]:
        """POST `body`. Retried only when it has a name: a retry of a create that did land
        then answers 409 (`ConflictError`), which the caller adopts. With `generateName`
        a retry could make a second object, so it is sent once. `retry` replaces the
        client's policy for this call (best-effort writes pass `NO_RETRIES`)."""
        kind = kind_of(body)
        meta = body["metadata"]
        return await self._call(
            "POST",
            self.path(kind, meta.get("namespace")),
            idempotent=bool(meta.get("name")),
            retry=retry,
            json=body,
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
            # A failure is raised, never cached: a cached False would send every later
            # status write to the main resource, which ignores `status`, until a restart.
            body = await self._call("GET", kind.base())
            names = {r.get("name") for r in body.get("resources", [])}
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


def _body_or_raise(method: str, path: str, response: httpx.Response) -> dict[str, Any]:
    status = response.status_code
    if status < 400:
        body = response.json() if response.content else {}
        return body if isinstance(body, dict) else {}
    try:
        message = str(response.json().get("message", response.text))
    except (ValueError, AttributeError):
        message = response.text
    message = f"{method} {path}: {message[:300]}"
    if status == 429 or status >= 500:
        return_after = retry_after(response.headers.get("Retry-After"))
        raise TemporaryKubeError(status, message, delay=return_after)
    error = {404: NotFoundError, 409: ConflictError, 401: UnauthorizedError}.get(status, KubeError)
    raise error(status, message)
