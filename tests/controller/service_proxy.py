"""kube-proxy's stand-in for the test kubelet: a stable address per Service.

Without it the test kubelet stands in for cluster DNS by writing a ready backend
pod's IP into a container's environment (`pod_env.py`), fixed when the container
starts. In a cluster the name stays on the Service's address and kube-proxy picks a
ready pod behind it for each connection, so a target keeps reaching a mock pod that
was replaced under it (new pod, new IP). This does the same on loopback: each
Service:port gets its own 127.77.x.y listener, and each connection is relayed to the
next ready pod the Service selects, in turn (as kube-proxy's IPVS round robin does),
the list looked up again at most every `REFRESH` seconds or when the one it picked
stops answering.

With `slices` on, the ready endpoints are those of the Service's EndpointSlices, as
the real controller manager writes them, as kube-proxy reads them. That needs pods
off loopback (`RealKubelet.pod_prefix`): the API server refuses a loopback address in
an EndpointSlice ("may not be in the loopback range"). Off, the ready pods the
Service selects stand in for them (the controller computes its slices from the same
pods' Ready conditions).

With `hosts` set it also stands in for cluster DNS for processes that look a name up
themselves (a generator given the target Service's name): `watch` gives every
Service in the cluster its address and a line `ADDRESS NAME.NAMESPACE.svc` in that
hosts file, removed again by `stop`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.controller.admin_api import AdminApi
from tests.controller.pod_env import ready_ips

REFRESH = 1.0  # seconds a backend is trusted before it is looked up again


@dataclass
class _Route:
    namespace: str
    service: str
    port: int
    server: asyncio.Server | None = None
    backends: list[str] = field(default_factory=list)
    looked_up: float = 0.0
    turn: int = 0  # the next backend's place in `backends`


@dataclass
class ServiceProxies:
    api: AdminApi
    routes: dict[tuple[str, str, int], _Route] = field(default_factory=dict)
    relayed: int = 0  # connections relayed, for tests to see it in use
    by_backend: dict[str, int] = field(default_factory=dict)  # connections per pod IP
    hosts: Path | None = None  # a hosts file to publish each Service's name in
    slices: bool = False  # follow the EndpointSlices (pods off loopback), not the pods
    # Each Service's ready backends, every time they changed: tests see them follow a loss.
    history: dict[str, list[list[str]]] = field(default_factory=dict)
    _marker: str = field(default_factory=lambda: f"# plimsoll-test-{random.getrandbits(32):08x}")
    _opening: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def address(self, namespace: str, service: str, port: int) -> str | None:
        """The stable address of Service:port, or None while no pod behind it is ready
        (a kubelet keeps the dependent pod waiting, as without the proxy)."""
        key = (namespace, service, port)
        async with self._opening:  # one listener per Service:port, asked from several tasks
            route = self.routes.get(key)
            if route is None:
                route = await self._open(_Route(namespace, service, port))
                if route is None:
                    return None
                self.routes[key] = route
        assert route.server is not None
        return str(route.server.sockets[0].getsockname()[0])

    async def _open(self, route: _Route) -> _Route | None:
        if await self._backend(route, fresh=True) is None:
            return None
        for _ in range(50):
            ip = f"127.77.{random.randrange(1, 255)}.{random.randrange(1, 255)}"
            with contextlib.suppress(OSError):  # taken: another session's, try again
                route.server = await asyncio.start_server(
                    lambda r, w, route=route: self._relay(route, r, w), ip, route.port
                )
                return route
        raise RuntimeError(f"no free 127.77.x.y address for {route.service}:{route.port}")

    async def _backend(self, route: _Route, *, fresh: bool = False) -> str | None:
        if fresh or not route.backends or time.monotonic() - route.looked_up > REFRESH:
            find = slice_ips if self.slices else ready_ips
            route.backends = await find(self.api, route.service, route.namespace)
            seen = self.history.setdefault(route.service, [])
            if not seen or seen[-1] != route.backends:
                seen.append(list(route.backends))
            route.looked_up = time.monotonic()
        if not route.backends:
            return None
        route.turn = (route.turn + 1) % len(route.backends)
        return route.backends[route.turn]

    async def watch(self, every: float = 0.5) -> None:
        """Give every Service of the cluster its address and, with `hosts`, its name in
        the hosts file, as kube-proxy and cluster DNS would; until cancelled."""
        published: set[tuple[str, str]] = set()
        while True:
            for service in await self.api.items("/api/v1/services"):
                meta = service["metadata"]
                namespace, name = meta["namespace"], meta["name"]
                selector = service["spec"].get("selector")
                if not selector or (namespace, name) in published:
                    continue
                ports = [p["port"] for p in service["spec"].get("ports", [])]
                addresses = {await self.address(namespace, name, port) for port in ports}
                if None in addresses or len(addresses) != 1:
                    continue  # no ready pod yet: next time
                if self.hosts is not None:
                    line = f"{addresses.pop()} {name}.{namespace}.svc {self._marker}\n"
                    with self.hosts.open("a") as hosts:
                        hosts.write(line)
                published.add((namespace, name))
            await asyncio.sleep(every)

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
        peer = upstream[1].get_extra_info("peername")
        if peer:
            self.by_backend[peer[0]] = self.by_backend.get(peer[0], 0) + 1
        await asyncio.gather(_pipe(reader, upstream[1]), _pipe(upstream[0], writer))

    async def stop(self) -> None:
        for route in self.routes.values():
            if route.server is not None:
                route.server.close()
        self.routes.clear()
        if self.hosts is not None and self.hosts.exists():
            lines = self.hosts.read_text().splitlines(keepends=True)
            self.hosts.write_text("".join(x for x in lines if self._marker not in x))


async def slice_ips(api: AdminApi, service: str, namespace: str) -> list[str]:
    """The ready endpoints of the Service's EndpointSlices (ready unset counts as ready,
    as the API defines it), in a stable order."""
    slices = await api.items(
        f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices",
        labelSelector=f"kubernetes.io/service-name={service}",
    )
    ips = {
        endpoint["addresses"][0]
        for piece in slices
        for endpoint in piece.get("endpoints") or []
        if (endpoint.get("conditions") or {}).get("ready") is not False and endpoint["addresses"]
    }
    return sorted(ips)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
