"""An emulated API server for the operator tests: kmock's emulator plus what kmock lacks.

`FakeCluster` is kmock's `KubernetesEmulator` with the parts a real control plane
adds and kmock 0.8 lacks: Namespaces (kmock's path parser answers 500 for them),
namespace deletion that takes the namespace's objects with it (finished by the
fake kubelet, `kubelet.py`), server-side apply creating what is absent (kmock
merges a PATCH into an existing object, as an apply of the same fields does), a
log of every API call (method, path, query, user
agent) for the RBAC test, and the pod proxy (`apiserver_proxy.py`) an operator
outside the cluster reaches generators by. `conftest.py` serves it with
`kmock.Server` on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import aiohttp.web
import kmock
from kmock._internal import rendering  # the request type `_handle` is given

from tests.controller.apiserver_proxy import PROXY_PATH, serve_pod_proxy

APPLY_PATCH = "application/apply-patch+yaml"
_NS_PATH = re.compile(r"^/api/v1/namespaces(?:/([^/]+))?$")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _is_apply(request: rendering.Request) -> bool:
    return request.headers.get("Content-Type", "").startswith(APPLY_PATCH)


def _give_uid(body: dict[str, Any]) -> None:
    body.setdefault("metadata", {}).setdefault("uid", str(uuid.uuid4()))


class FakeCluster(kmock.KubernetesEmulator):
    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        # No status subresource: kmock 0.8 does not serve `.../status`, so the operator
        # sees none in discovery and patches the status on the object itself.
        self.calls: list[tuple[str, str, str, str]] = []  # method, path, query, user agent
        self.namespaces: dict[str, dict[str, Any]] = {}
        for path, kind, namespaced in [
            ("plimsoll.dev/v1alpha1/capacitytests", "CapacityTest", True),
            ("v1/namespaces", "Namespace", False),
            ("v1/pods", "Pod", True),
            ("v1/services", "Service", True),
            ("v1/configmaps", "ConfigMap", True),
            ("v1/secrets", "Secret", True),
            ("v1/events", "Event", True),
            ("batch/v1/jobs", "Job", True),
            ("apps/v1/deployments", "Deployment", True),
            ("autoscaling/v2/horizontalpodautoscalers", "HorizontalPodAutoscaler", True),
            ("networking.k8s.io/v1/networkpolicies", "NetworkPolicy", True),
            ("v1/resourcequotas", "ResourceQuota", True),
            ("v1/limitranges", "LimitRange", True),
        ]:
            self.resources[path] = kmock.ResourceInfo(
                kind=kind,
                namespaced=namespaced,
                verbs={"get", "list", "watch", "create", "patch", "delete"},
            )

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        agent = raw_request.headers.get("User-Agent", "")
        self.calls.append((raw_request.method, raw_request.path, raw_request.query_string, agent))
        proxied = PROXY_PATH.match(raw_request.path)
        if proxied is not None:
            return await serve_pod_proxy(raw_request, proxied, self.find_pod)
        match = _NS_PATH.match(raw_request.path)
        if match is None:
            response = await super().__call__(raw_request)
            if raw_request.method in ("POST", "PATCH") and "/resourcequotas" in raw_request.path:
                self._count_quotas()
            return response
        return await self._namespace_call(raw_request, match.group(1))

    async def _handle(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        # kmock finds its reactions by the request's identity, so the request is changed in
        # place (it is frozen to users, not to its emulator).
        if _is_apply(request) and request.data is None:  # kmock parses only JSON types
            object.__setattr__(request, "data", json.loads(request.body))
        if self._applies_to_nothing(request):
            # As the POST to the collection that kmock knows how to create from.
            collection = request.url.with_path(request.url.path.rsplit("/", 1)[0])
            for field, value in [
                ("action", kmock.action.CREATE), ("method", kmock.method.POST),
                ("url", collection), ("name", None),
            ]:  # fmt: skip
                object.__setattr__(request, field, value)
        if request.action == kmock.action.CREATE and isinstance(request.data, dict):
            _give_uid(request.data)  # as a real API server does; kmock gives none
        return await super()._handle(request)

    def _applies_to_nothing(self, request: rendering.Request) -> bool:
        """A server-side apply of an object that does not exist: it creates it."""
        if request.action != kmock.action.UPDATE or request.subresource:
            return False
        if not _is_apply(request):
            return False
        if request.resource is None or request.name is None:
            return False
        key = (request.resource, request.namespace, request.name)
        return key not in self.objects or self.objects[key].deleted

    async def _namespace_call(
        self, request: aiohttp.web.BaseRequest, name: str | None
    ) -> aiohttp.web.StreamResponse:
        def status(code: int, reason: str) -> aiohttp.web.Response:
            body = {
                "kind": "Status",
                "apiVersion": "v1",
                "code": code,
                "reason": reason,
                "message": reason,
            }
            return aiohttp.web.json_response(body, status=code)

        if request.method == "POST" and name is None:
            body = await request.json()
            new = body["metadata"]["name"]
            if new in self.namespaces:
                return status(409, "AlreadyExists")
            body.setdefault("status", {})["phase"] = "Active"
            _give_uid(body)
            self.namespaces[new] = body
            return aiohttp.web.json_response(body, status=201)
        if request.method == "GET" and name is None:
            wanted = dict(
                p.split("=", 1) for p in request.query.get("labelSelector", "").split(",") if p
            )
            items = [
                ns for ns in self.namespaces.values()
                if all(ns["metadata"].get("labels", {}).get(k) == v for k, v in wanted.items())
            ]  # fmt: skip
            return aiohttp.web.json_response({"kind": "NamespaceList", "items": items})
        applied = request.headers.get("Content-Type", "").startswith(APPLY_PATCH)
        if request.method == "PATCH" and applied and name and name not in self.namespaces:
            body = await request.json()
            body.setdefault("status", {})["phase"] = "Active"
            _give_uid(body)
            self.namespaces[name] = body
            return aiohttp.web.json_response(body, status=201)
        if name is None or name not in self.namespaces:
            return status(404, "NotFound")
        if request.method == "GET":
            return aiohttp.web.json_response(self.namespaces[name])
        if request.method == "PATCH":  # labels merged: all the operator sets on a namespace
            patch = await request.json()
            labels = self.namespaces[name]["metadata"].setdefault("labels", {})
            labels.update(patch.get("metadata", {}).get("labels", {}))
            return aiohttp.web.json_response(self.namespaces[name])
        if request.method == "DELETE":
            ns = self.namespaces[name]
            ns["metadata"].setdefault("deletionTimestamp", _now())
            ns["status"]["phase"] = "Terminating"
            return aiohttp.web.json_response(ns)
        return status(405, "MethodNotAllowed")

    def _count_quotas(self) -> None:
        """The quota controller's first count: until it, a real API server refuses pods."""
        for namespace, name, quota in self.live("resourcequotas"):
            if not quota.get("status"):
                hard = quota["spec"]["hard"]
                self.patch_object("resourcequotas", namespace, name, {"status": {"hard": hard}})

    def live(self, plural: str) -> list[tuple[str, str, dict[str, Any]]]:
        found = []
        for (resource, namespace, name), obj in list(self.objects.items()):
            if resource.plural == plural and not obj.deleted:
                found.append((namespace or "", name, dict(obj.raw)))
        return found

    def find_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return next((p for ns, n, p in self.live("pods") if (ns, n) == (namespace, name)), None)

    def patch_object(self, plural: str, namespace: str, name: str, patch: dict[str, Any]) -> None:
        for (resource, ns, n), obj in list(self.objects.items()):
            if resource.plural == plural and ns == namespace and n == name and not obj.deleted:
                obj.patch(patch)

    def drop_namespace_objects(self, namespace: str) -> None:
        for (_, ns, _), obj in list(self.objects.items()):
            if ns == namespace and not obj.deleted:
                obj.delete()
