"""A kubelet's log endpoint for the real API server: the pods' logs `pods/log` serves.

The test kubelets run processes but serve no kubelet API, so the API server has
nowhere to fetch a pod's log from. `LogNode` registers a Node whose kubelet port
is this small HTTPS server on 127.0.0.1: the API server's `GET .../pods/NAME/log`
is then proxied here as a kubelet's is (`/containerLogs/NS/POD/CONTAINER`, with
`tailLines`), and answered with the lines the test wrote for that pod. The API
server is started without `--kubelet-certificate-authority`, so it does not
verify the kubelet's certificate; the server presents the API server's own.

Used by the `kubectl plimsoll logs` test (test_apiserver_kubectl.py).
"""

from __future__ import annotations

import ssl
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp.web

from tests.controller import node
from tests.controller.admin_api import AdminApi
from tests.controller.control_plane import ControlPlane


@dataclass
class LogNode:
    api: AdminApi
    plane: ControlPlane
    name: str = field(default_factory=lambda: f"log-node-{uuid.uuid4().hex[:6]}")
    logs: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (ns, pod) -> lines
    asked: list[str] = field(default_factory=list)  # the paths and queries the API server sent
    _runner: aiohttp.web.AppRunner | None = None

    async def start(self) -> None:
        app = aiohttp.web.Application()
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._log)
        self._runner = aiohttp.web.AppRunner(app)
        await self._runner.setup()
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        pki = self.plane.folder / "pki"
        tls.load_cert_chain(str(pki / "apiserver.crt"), str(pki / "apiserver.key"))
        site = aiohttp.web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=tls)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        await self.api.create(
            "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": self.name}}
        )
        status = {
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": port}},
            "capacity": node.CAPACITY,
            "allocatable": node.CAPACITY,
        }
        await self.api.patch(f"/api/v1/nodes/{self.name}/status", {"status": status})

    async def stop(self) -> None:
        await self.api.delete(f"/api/v1/nodes/{self.name}")
        if self._runner is not None:
            await self._runner.cleanup()

    def pod(self, namespace: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
        """A pod bound to this node (no scheduler needed), with one container."""
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {
                "nodeName": self.name,
                "containers": [{"name": "main", "image": "plimsoll-test:0"}],
            },
        }

    async def _log(self, request: aiohttp.web.Request) -> aiohttp.web.Response:
        self.asked.append(str(request.rel_url))
        key = (request.match_info["namespace"], request.match_info["pod"])
        if key not in self.logs:
            return aiohttp.web.Response(status=404, text="no such container")
        lines = self.logs[key]
        tail = request.query.get("tailLines")
        if tail is not None:
            lines = lines[-int(tail) :] if int(tail) else []
        return aiohttp.web.Response(text="".join(f"{line}\n" for line in lines))
