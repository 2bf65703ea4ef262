"""kube-proxy's stand-in for the test kubelet: a stable address per Service.

Without it the test kubelet stands in for cluster DNS by writing a ready backend
pod's IP into a container's environment (`pod_env.py`), fixed when the container
starts. In a cluster the name stays on the Service's address and kube-proxy picks a
ready pod behind it for each connection, so a target keeps reaching a mock pod that
was replaced under it (new pod, new IP). This does the same on loopback: each
Service:port gets its own 127.77.x.y listener, and each connection is relayed to a
ready pod the Service selects, looked up again at most every `REFRESH` seconds or
when the one it knew stops answering.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field

from tests.controller.admin_api import AdminApi
from tests.controller.pod_env import backend_ip

REFRESH = 1.0  # seconds a backend is trusted before it is looked up again


@dataclass
class _Route:
    namespace: str
    service: str
    port: int
    server: asyncio.Server | None = None
    backend: str | None = None
    looked_up: float = 0.0


@dataclass
class ServiceProxies:
    api: AdminApi
    routes: dict[tuple[str, str, int], _Route] = field(default_factory=dict)
    relayed: int = 0  # connections relayed, for tests to see it in use

    async def address(self, namespace: str, service: str, port: int) -> str | None:
        """The stable address of Service:port, or None while no pod behind it is ready
        (a kubelet keeps the dependent pod waiting, as without the proxy)."""
        key = (namespace, service, port)
        route = self.routes.get(key)
        if route is None:
            route = _Route(namespace, service, port)
            if await self._backend(route, fresh=True) is None:
                return None
            for _ in range(50):
                ip = f"127.77.{random.randrange(1, 255)}.{random.randrange(1, 255)}"
                with contextlib.suppress(OSError):  # taken: another session's, try again
                    route.server = await asyncio.start_server(
                        lambda r, w, route=route: self._relay(route, r, w), ip, port
                    )
                    break
            else:
                raise RuntimeError(f"no free 127.77.x.y address for {service}:{port}")
            self.routes[key] = route
        assert route.server is not None
        return str(route.server.sockets[0].getsockname()[0])

    async def _backend(self, route: _Route, *, fresh: bool = False) -> str | None:
        if fresh or route.backend is None or time.monotonic() - route.looked_up > REFRESH:
            route.backend = await backend_ip(self.api, route.service, route.namespace)
            route.looked_up = time.monotonic()
        return route.backend

    async def _relay(
        self, route: _Route, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        for fresh in (False, True):  # the pod it knew may be gone: look again, once
            ip = await self._backend(route, fresh=fresh)
            if ip is None:
                continue
            with contextlib.suppress(OSError):
                upstream = await asyncio.open_connection(ip, route.port)
                break
        if upstream is None:
            writer.close()  # as kube-proxy does with no ready endpoint: refused
            return
        self.relayed += 1
        await asyncio.gather(_pipe(reader, upstream[1]), _pipe(upstream[0], writer))

    async def stop(self) -> None:
        for route in self.routes.values():
            if route.server is not None:
                route.server.close()
        self.routes.clear()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
