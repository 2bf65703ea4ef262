"""Plimsoll's calls to the Kubernetes API, through the official `kubernetes` client.

Used by the Kubernetes platform (the run's children) and the operator (status,
report ConfigMap, namespace cleanup). Requests go through the official client's
`ApiClient` (its urllib3 transport, TLS and credentials), configured from the login
kopf made (`from_connection` takes kopf's ConnectionInfo), so the operator and its
runs use one identity and one set of RBAC rules. The client blocks, so every call
runs in this client's own thread pool of `THREADS` threads: the event loop never
waits on a socket, and at most `THREADS` requests are in flight at once.

Errors are translated here, at the boundary, from `ApiException` and urllib3's
faults into `plimsoll.kube.errors`: `NotFoundError`, `ConflictError`,
`UnauthorizedError`, `TemporaryKubeError` (429, 5xx, connection faults, timeouts;
with the server's Retry-After) or `KubeError` carrying the API server's status and
message. Idempotent requests are retried on temporary faults within a `RetryPolicy`
(`plimsoll.kube.retry`); a 401 takes fresh credentials from `relogin` (kopf's
login, run again) and is retried once.

Objects the operator owns are written with server-side apply (`apply`), as field
manager `plimsoll`: applying the same state again writes nothing (the API server
keeps the resourceVersion), and fields others set on the object survive.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException

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
    DEPLOYMENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    JOBS,
    NAMESPACES,
    NETWORK_POLICIES,
    PODS,
    RESOURCE_QUOTAS,
    ROLE_BINDINGS,
    SECRETS,
    SERVICES,
    Kind,
    kind_of,
)
from plimsoll.kube.retry import NO_RETRIES, RetryPolicy, retry_after, retrying
from plimsoll.kube.session import configuration, configuration_of

# What the platform, the controller, the CLI and the tests import from here: the client
# and, re-exported, the kinds, errors and retry policy they hand to it.
__all__ = [
    "CAPACITY_TESTS",
    "CONFIG_MAPS",
    "DEPLOYMENTS",
    "HORIZONTAL_POD_AUTOSCALERS",
    "JOBS",
    "NAMESPACES",
    "NETWORK_POLICIES",
    "NO_RETRIES",
    "PODS",
    "RESOURCE_QUOTAS",
    "ROLE_BINDINGS",
    "SECRETS",
    "SERVICES",
    "ConflictError",
    "KubeClient",
    "KubeError",
    "NotFoundError",
    "RetryPolicy",
    "TemporaryKubeError",
    "UnauthorizedError",
    "kind_of",
]

FIELD_MANAGER = "plimsoll"
THREADS = 4  # requests in flight at once, per client (and urllib3 connections kept)
MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"  # JSON is YAML: the body is sent as JSON

Relogin = Callable[[], Awaitable[Any]]  # returns a kopf ConnectionInfo, or None


@dataclass(frozen=True)
class Proxied:
    """A pod's answer through the API server's pod proxy, passed on unchanged."""

    status: int
    content_type: str
    body: bytes


def _matches(labels: dict[str, str] | None, wanted: dict[str, str]) -> bool:
    labels = labels or {}
    return all(labels.get(k) == v for k, v in wanted.items())


class KubeClient:
    def __init__(
        self,
        server: str | Configuration,
        *,
        headers: dict[str, str] | None = None,
        retry: RetryPolicy | None = None,
        relogin: Relogin | None = None,
        timeout: float = 30.0,
    ) -> None:
        config = server if isinstance(server, Configuration) else configuration(server)
        self.server = str(config.host).rstrip("/")
        self.retry = retry or RetryPolicy()
        self._relogin = relogin
        self._timeout = timeout
        self._headers = dict(headers or {})
        self._threads = ThreadPoolExecutor(THREADS, thread_name_prefix="kube-api")
        self._api = self._open(config)
        self._retired: list[ApiClient] = []  # closed at aclose: requests may be in flight
        self._credentials = 0  # counts logins, so concurrent 401s re-login only once
        self._login_lock = asyncio.Lock()
        self._subresources: dict[tuple[str, str], bool] = {}

    def _open(self, config: Configuration) -> ApiClient:
        api = ApiClient(config)
        api.user_agent = "plimsoll"
        api.default_headers.update(self._headers)
        return api

    @classmethod
    def from_connection(
        cls, info: Any, *, relogin: Relogin | None = None, retry: RetryPolicy | None = None
    ) -> KubeClient:
        """From kopf's `ConnectionInfo`; `relogin` gives fresh credentials after a 401."""
        return cls(configuration_of(info, pool_size=THREADS), retry=retry, relogin=relogin)

    def use_credentials(self, info: Any) -> None:
        """Send later requests with `info`'s credentials (a token rotated, a login renewed)."""
        self._retired.append(self._api)
        self._api = self._open(configuration_of(info, pool_size=THREADS))
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
        for api in [*self._retired, self._api]:
            await asyncio.get_running_loop().run_in_executor(self._threads, api.close)
        self._threads.shutdown(wait=False)

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

    def _blocking(
        self,
        api: ApiClient,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        body: Any,
        content_type: str,
    ) -> dict[str, Any]:
        """One request on a worker thread; a failed answer raises `ApiException`."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        request = api.param_serialize(
            method,
            path,
            query_params=query,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        response = api.call_api(*request, _request_timeout=self._timeout)
        response.read()  # type: ignore[no-untyped-call]  # the client's own, untyped
        # Raises ApiException (with the status, body and headers) for anything not 2xx.
        answer = api.response_deserialize(response, {"2XX": "object"}).data
        return answer if isinstance(answer, dict) else {}

    async def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        body: Any,
        content_type: str,
    ) -> dict[str, Any]:
        """One request, its failure translated; a 401 is retried once with fresh credentials."""
        loop = asyncio.get_running_loop()
        for fresh in (False, True):
            seen = self._credentials
            try:
                return await loop.run_in_executor(
                    self._threads,
                    self._blocking,
                    self._api,
                    method,
                    path,
                    query,
                    body,
                    content_type,
                )
            except ApiException as exc:
                if exc.status == 401 and not fresh and await self._fresh_credentials(seen):
                    continue
                raise _translated(method, path, exc) from exc
            except urllib3.exceptions.HTTPError as exc:
                # The server restarted, dropped the connection or was too slow.
                reason = str(exc) or type(exc).__name__
                raise TemporaryKubeError(0, f"{method} {path}: {reason}") from exc
        raise AssertionError("unreachable: the second pass returns or raises")

    async def _call(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        idempotent: bool = True,
        retry: RetryPolicy | None = None,
    ) -> dict[str, Any]:
        policy = (retry or self.retry) if idempotent else NO_RETRIES
        return await retrying(
            lambda: self._send(method, path, query or [], body, content_type),
            policy,
            f"{method} {path}",
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
            query=[("fieldManager", FIELD_MANAGER)],
            body=body,
            idempotent=bool(meta.get("name")),
            retry=retry,
        )

    async def apply(
        self, body: dict[str, Any], *, sub: str | None = None, force: bool = True
    ) -> dict[str, Any]:
        """Server-side apply of `body` as field manager `plimsoll`: creates it, or sets
        the fields it names, leaving everyone else's fields alone; an unchanged body
        writes nothing. With `force` the fields are taken over from other managers;
        without it a field another manager set to another value is a `ConflictError`."""
        kind = kind_of(body)
        meta = body["metadata"]
        return await self._call(
            "PATCH",
            self.path(kind, meta.get("namespace"), meta["name"], sub),
            query=[("fieldManager", FIELD_MANAGER), ("force", "true" if force else "false")],
            body=body,
            content_type=APPLY_PATCH,
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
        query = [("labelSelector", ",".join(f"{k}={v}" for k, v in wanted.items()))]
        body = await self._call("GET", self.path(kind, namespace), query=query if wanted else [])
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
        """A JSON merge patch: for fixed values on objects the operator does not own."""
        return await self._call(
            "PATCH",
            self.path(kind, namespace, name, sub),
            query=[("fieldManager", FIELD_MANAGER)],
            body=body,
            content_type=MERGE_PATCH,
        )

    async def delete(
        self, kind: Kind, namespace: str | None, name: str, *, grace: int | None = None
    ) -> bool:
        """Delete (children in the background); False when it was already gone. `grace`:
        the seconds a pod gets to stop (0: removed at once); None: the object's own."""
        query = [("propagationPolicy", "Background")]
        if grace is not None:
            query.append(("gracePeriodSeconds", str(grace)))
        try:
            await self._call("DELETE", self.path(kind, namespace, name), query=query)
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

    async def logs(self, namespace: str, pod: str, *, tail: int = 50) -> str:
        """The last `tail` lines of a pod's (only or first) container's log."""
        path = self.path(PODS, namespace, pod, "log")
        query = [("tailLines", str(tail))]
        api = self._api

        def read() -> str:
            request = api.param_serialize(
                "GET", path, query_params=query, auth_settings=["BearerToken"]
            )
            response = api.call_api(*request, _request_timeout=self._timeout)
            response.read()  # type: ignore[no-untyped-call]  # the client's own, untyped
            return str(api.response_deserialize(response, {"2XX": "str"}).data)

        try:
            return await asyncio.get_running_loop().run_in_executor(self._threads, read)
        except ApiException as exc:
            raise _translated("GET", path, exc) from exc
        except urllib3.exceptions.HTTPError as exc:
            raise TemporaryKubeError(0, f"GET {path}: {exc!r}") from exc

    async def proxy(
        self,
        method: str,
        namespace: str,
        pod: str,
        port: int,
        rest: str,
        content: bytes,
        headers: dict[str, str],
    ) -> Proxied:
        """A request to a pod through the API server's pod proxy (when not in the cluster).
        The pod's answer, and the API server's own refusals, come back as they are; an
        API server that cannot be reached is a `TemporaryKubeError` (status 0)."""
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}:{port}/proxy/{rest.lstrip('/')}"
        api = self._api

        def send() -> Proxied:
            # The client's URL and credentials, but the body as it came: the REST layer
            # would re-encode a JSON body, and the pod's answer is not the API's.
            _, url, sent, _, _ = api.param_serialize(
                method, path, header_params=dict(headers), auth_settings=["BearerToken"]
            )
            answer = api.rest_client.pool_manager.request(
                method, url, body=content or None, headers=sent, timeout=self._timeout
            )
            kind = answer.headers.get("content-type", "application/octet-stream")
            return Proxied(answer.status, kind, answer.data)

        try:
            return await asyncio.get_running_loop().run_in_executor(self._threads, send)
        except urllib3.exceptions.HTTPError as exc:
            raise TemporaryKubeError(0, f"{method} {path}: {exc!r}") from exc


def _translated(method: str, path: str, exc: ApiException) -> KubeError:
    """The API server's refusal as one of Plimsoll's errors, with its own message."""
    status = int(exc.status or 0)
    message = str(exc.reason or "")
    try:
        answer = json.loads(exc.body or "")
        message = str(answer.get("message", message))
    except (ValueError, AttributeError):
        message = (exc.body or message) if status else message
    message = f"{method} {path}: {message[:300]}"
    if status == 429 or status >= 500:
        headers = exc.headers or {}
        return TemporaryKubeError(status, message, delay=retry_after(headers.get("Retry-After")))
    error = {404: NotFoundError, 409: ConflictError, 401: UnauthorizedError}.get(status, KubeError)
    return error(status, message)
