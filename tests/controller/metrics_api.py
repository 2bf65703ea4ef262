"""metrics.k8s.io for the test kubelet's pods: what metrics-server serves a cluster.

The control plane has no metrics-server, and its image could not be built here. A
HorizontalPodAutoscaler's CPU target needs one: kube-controller-manager's HPA controller
reads each pod's CPU from `metrics.k8s.io/v1beta1` through the API server's aggregation
layer. This server answers that API from the test kubelet's own cgroups (the CPU
seconds and working set its cAdvisor stand-in exports), as metrics-server answers it
from the kubelets' resource metrics: a rate over a short window, with the window's end
as the timestamp.

`register` points the cluster's `v1beta1.metrics.k8s.io` APIService at it: an
ExternalName Service naming 127.0.0.1, which the aggregator resolves to
`https://127.0.0.1:PORT` (it connects to an ExternalName Service's name directly), with
TLS verification off (a self-signed certificate made by `openssl` for the session).
`unregister` removes both: an APIService left unavailable would fail every client's
discovery of the cluster's APIs.

Served: the group-version's resource list, and pod metrics listed per namespace
(`labelSelector` with `key=value` terms, as the HPA sends its scale selector) or read
by name. Nothing else (no node metrics, no OpenAPI): the HPA asks for nothing else.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from plimsoll.metrics.exporter import ExportedContainer
from tests.controller.admin_api import AdminApi

GROUP_VERSION = "metrics.k8s.io/v1beta1"
APISERVICE = "v1beta1.metrics.k8s.io"
SERVICE_NAMESPACE, SERVICE_NAME = "kube-system", "plimsoll-test-metrics"
WINDOW_S = 5.0  # metrics-server's rate window is the kubelet's (about 10-15 s); shorter here
SAMPLE_EVERY_S = 1.0


@dataclass(frozen=True)
class PodSample:
    """One container's counters at one moment."""

    at: float
    cpu_seconds: float
    working_set_bytes: float


# A pod as the kubelet runs it: its object (labels, namespace, name) and its container.
PodsSource = Callable[[], Iterable[tuple[dict[str, Any], ExportedContainer]]]


@dataclass
class MetricsApi:
    pods: PodsSource
    folder: Path
    port: int = 0
    _samples: dict[tuple[str, str, str], deque[PodSample]] = field(default_factory=dict)
    served: list[str] = field(default_factory=list)  # each request's path, and its items
    _runner: web.AppRunner | None = None
    _sampler: asyncio.Task[None] | None = None

    async def start(self) -> int:
        """Serve on a free loopback port over TLS; the port."""
        app = web.Application()
        app.router.add_get(f"/apis/{GROUP_VERSION}", self._resources)
        app.router.add_get(f"/apis/{GROUP_VERSION}/namespaces/{{namespace}}/pods", self._list)
        app.router.add_get(
            f"/apis/{GROUP_VERSION}/namespaces/{{namespace}}/pods/{{name}}", self._one
        )
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))  # bound here, so the port is known and kept
        self.port = int(listener.getsockname()[1])
        await web.SockSite(self._runner, listener, ssl_context=self._tls()).start()
        self._sampler = asyncio.create_task(self._sample_forever())
        return self.port

    async def stop(self) -> None:
        if self._sampler is not None:
            self._sampler.cancel()
            await asyncio.gather(self._sampler, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()

    def _tls(self) -> ssl.SSLContext:
        cert, key = self.folder / "metrics.crt", self.folder / "metrics.key"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-subj", "/CN=plimsoll-test-metrics", "-addext", "subjectAltName=IP:127.0.0.1",
             "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(cert), str(key))
        return context

    async def _sample_forever(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(SAMPLE_EVERY_S)

    def sample(self) -> None:
        """Read every running container's counters once (a container that cannot be read
        this time, e.g. restarting, is skipped)."""
        now = time.monotonic()
        for _, container in self.pods():
            try:
                series = container.series()
            except (OSError, ValueError):
                continue
            key = (container.namespace, container.pod, container.container)
            kept = self._samples.setdefault(key, deque(maxlen=60))
            kept.append(
                PodSample(
                    now,
                    series["container_cpu_usage_seconds_total"],
                    series["container_memory_working_set_bytes"],
                )
            )

    def usage(self, namespace: str, pod: str, container: str) -> tuple[float, float] | None:
        """(cores, working set bytes) over the last WINDOW_S, or None before two samples."""
        kept = self._samples.get((namespace, pod, container))
        if not kept or len(kept) < 2:
            return None
        last = kept[-1]
        first = next((s for s in kept if s.at >= last.at - WINDOW_S), kept[0])
        if first is last:
            first = kept[-2]
        cores = max(last.cpu_seconds - first.cpu_seconds, 0.0) / (last.at - first.at)
        return cores, last.working_set_bytes

    def pod_metrics(
        self, pod: dict[str, Any], container: ExportedContainer
    ) -> dict[str, Any] | None:
        found = self.usage(container.namespace, container.pod, container.container)
        if found is None:
            return None
        cores, memory = found
        meta = pod["metadata"]
        return {
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "labels": meta.get("labels") or {},
                "creationTimestamp": _now(),
            },
            "timestamp": _now(),
            "window": f"{WINDOW_S:g}s",
            "containers": [
                {
                    "name": container.container,
                    "usage": {"cpu": f"{round(cores * 1e9)}n", "memory": f"{round(memory)}"},
                }
            ],
        }

    async def _resources(self, request: web.Request) -> web.Response:
        del request
        resource = {"namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]}
        return web.json_response(
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": GROUP_VERSION,
                "resources": [{"name": "pods", "singularName": "", **resource}],
            }
        )

    async def _list(self, request: web.Request) -> web.Response:
        namespace = request.match_info["namespace"]
        try:
            wanted = _selector(request.query.get("labelSelector", ""))
        except ValueError as exc:
            return web.json_response(_status(400, str(exc)), status=400)
        items = [
            metrics
            for pod, container in self.pods()
            if pod["metadata"]["namespace"] == namespace
            and wanted.items() <= (pod["metadata"].get("labels") or {}).items()
            and (metrics := self.pod_metrics(pod, container)) is not None
        ]
        self.served.append(f"{request.path_qs}: {len(items)} pods")
        return web.json_response(
            {"kind": "PodMetricsList", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}
        )

    async def _one(self, request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        for pod, container in self.pods():
            meta = pod["metadata"]
            if (meta["namespace"], meta["name"]) == (namespace, name):
                metrics = self.pod_metrics(pod, container)
                if metrics is not None:
                    return web.json_response(
                        {"kind": "PodMetrics", "apiVersion": GROUP_VERSION, **metrics}
                    )
        return web.json_response(_status(404, f"podmetrics {name!r} not found"), status=404)


def _selector(text: str) -> dict[str, str]:
    """`a=b,c==d` as a dict; other selector forms are refused (the HPA sends these)."""
    wanted: dict[str, str] = {}
    for term in filter(None, (t.strip() for t in text.split(","))):
        key, sep, value = term.replace("==", "=").partition("=")
        if not sep or not key or "!" in key:
            raise ValueError(f"label selector term {term!r}: only key=value is served here")
        wanted[key] = value
    return wanted


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
            "code": code}  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def register(api: AdminApi, port: int) -> None:
    """Point `v1beta1.metrics.k8s.io` at this server (an ExternalName Service naming
    127.0.0.1 and the APIService), and wait until the aggregator calls it Available."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE_NAME, "namespace": SERVICE_NAMESPACE},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1",
                 "ports": [{"port": port, "protocol": "TCP"}]},
    }  # fmt: skip
    await api.create(f"/api/v1/namespaces/{SERVICE_NAMESPACE}/services", service)
    apiservice = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": APISERVICE},
        "spec": {
            "service": {"namespace": SERVICE_NAMESPACE, "name": SERVICE_NAME, "port": port},
            "group": "metrics.k8s.io",
            "version": "v1beta1",
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    await api.create("/apis/apiregistration.k8s.io/v1/apiservices", apiservice)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = await api.get(f"/apis/apiregistration.k8s.io/v1/apiservices/{APISERVICE}") or {}
        conditions = (found.get("status") or {}).get("conditions") or []
        if any(c["type"] == "Available" and c["status"] == "True" for c in conditions):
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"{APISERVICE} did not become Available: {conditions}")


async def unregister(api: AdminApi) -> None:
    await api.delete(f"/apis/apiregistration.k8s.io/v1/apiservices/{APISERVICE}")
    await api.delete(f"/api/v1/namespaces/{SERVICE_NAMESPACE}/services/{SERVICE_NAME}")
