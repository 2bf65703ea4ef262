"""A `/metrics` endpoint publishing local processes under cAdvisor's metric names.

The local platform registers the processes it started (the pinned target by its
cgroup, the rest by process group) and serves this on 127.0.0.1; a real Prometheus
that scrapes it can then be asked with the very same PromQL the Kubernetes platform
uses (`plimsoll run --prometheus URL`), which is how the PromQL is tested without a
cluster. Each process is labelled like a container (namespace, pod, container), and
the restart figures kube-state-metrics would publish are served beside them.
Services that are exporters themselves are relayed after them (`relay`).

Figures are read from the kernel on every scrape, as cAdvisor does, so a scrape
shows the state at that moment and nothing is cached. A process whose cgroup or
group vanished simply has no series in that scrape: Prometheus marks them stale,
and the source reports the gap instead of a zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx

from plimsoll.metrics.cgroup import (
    CgroupPaths,
    CgroupReadError,
    cpu_period_quota_us,
    memory_limit_bytes,
    read_sample,
)
from plimsoll.metrics.proc import ProcGroupGoneError, ProcGroupReader
from plimsoll.metrics.relay import RelayedExporter

_FAMILIES = {
    "container_cpu_usage_seconds_total": ("counter", "Cumulative CPU time consumed."),
    "container_cpu_cfs_periods_total": ("counter", "Elapsed enforcement periods."),
    "container_cpu_cfs_throttled_periods_total": ("counter", "Throttled period intervals."),
    "container_memory_working_set_bytes": ("gauge", "Usage minus inactive file cache."),
    "container_oom_events_total": ("counter", "Out-of-memory kills in the container."),
    "container_spec_cpu_quota": ("gauge", "CPU quota in microseconds per period."),
    "container_spec_cpu_period": ("gauge", "CPU period in microseconds."),
    "container_spec_memory_limit_bytes": ("gauge", "Memory limit (0: none)."),
    "kube_pod_container_status_restarts_total": ("counter", "Container restarts."),
    "kube_pod_container_status_last_terminated_reason": ("gauge", "Why it last stopped."),
}


@dataclass
class ExportedContainer:
    """One local process shown as a container. Give `paths` (pinned) or `pgid`."""

    namespace: str
    pod: str
    container: str
    paths: CgroupPaths | None = None
    pgid: int | None = None
    restarts: int = 0  # the platform bumps these when it restarts the process
    last_terminated_reason: str | None = None  # e.g. "OOMKilled", "Error"
    _proc: ProcGroupReader | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if (self.paths is None) == (self.pgid is None):
            raise ValueError("an exported container needs exactly one of paths or pgid")
        if self.pgid is not None:
            self._proc = ProcGroupReader(self.pgid)

    def labels(self) -> str:
        pairs = {"namespace": self.namespace, "pod": self.pod, "container": self.container}
        return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs.items())

    def series(self) -> dict[str, float]:
        """This container's values by metric name; raises when it cannot be read."""
        out: dict[str, float] = {
            "kube_pod_container_status_restarts_total": self.restarts,
        }
        if self._proc is not None:
            sample = self._proc.read(time.time())
            out["container_cpu_usage_seconds_total"] = sample.cpu_seconds
            out["container_memory_working_set_bytes"] = sample.working_set_bytes
            out["container_spec_memory_limit_bytes"] = 0
            return out
        assert self.paths is not None
        sample = read_sample(self.paths, time.time())
        out["container_cpu_usage_seconds_total"] = sample.cpu_seconds
        out["container_memory_working_set_bytes"] = sample.working_set_bytes
        if sample.periods is not None:
            out["container_cpu_cfs_periods_total"] = sample.periods
            out["container_cpu_cfs_throttled_periods_total"] = sample.throttled or 0
        if sample.oom_kills is not None:
            out["container_oom_events_total"] = sample.oom_kills
        period, quota = cpu_period_quota_us(self.paths)
        out["container_spec_cpu_period"] = period
        if quota is not None:  # cAdvisor leaves the quota out when there is none
            out["container_spec_cpu_quota"] = quota
        out["container_spec_memory_limit_bytes"] = memory_limit_bytes(self.paths) or 0
        return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(containers: Iterable[ExportedContainer]) -> str:
    """The Prometheus text exposition (format 0.0.4) of every readable container."""
    rows: dict[str, list[str]] = {name: [] for name in _FAMILIES}
    errors: list[str] = []
    for c in containers:
        try:
            values = c.series()
        except (CgroupReadError, ProcGroupGoneError, OSError) as exc:
            errors.append(f"# {c.namespace}/{c.pod}/{c.container} unreadable: {exc}")
            continue
        for name, value in values.items():
            rows[name].append(f"{name}{{{c.labels()}}} {value:.17g}")
        if c.last_terminated_reason:
            name = "kube_pod_container_status_last_terminated_reason"
            reason = _escape(c.last_terminated_reason)
            rows[name].append(f'{name}{{{c.labels()},reason="{reason}"}} 1')
    lines = list(errors)
    for name, (kind, help_text) in _FAMILIES.items():
        if rows[name]:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *rows[name]]
    return "\n".join(lines) + "\n"


class CadvisorExporter:
    """Serves `render()` of the registered containers at http://HOST:PORT/metrics
    (127.0.0.1 unless the user asks for another address, e.g. for a Prometheus in a VM)."""

    def __init__(
        self, containers: Iterable[ExportedContainer] = (), port: int = 0, host: str = "127.0.0.1"
    ) -> None:
        self.containers: list[ExportedContainer] = list(containers)
        # Services that are exporters themselves: their pages are served after ours.
        self.relays: list[RelayedExporter] = []
        self._port = port
        self._host = host
        self._server: asyncio.Server | None = None

    def add(self, container: ExportedContainer) -> None:
        self.containers.append(container)

    async def _relayed(self) -> str:
        if not self.relays:
            return ""
        async with httpx.AsyncClient() as client:
            pages = await asyncio.gather(*(relay.fetch(client) for relay in list(self.relays)))
        return "".join(pages)

    @property
    def address(self) -> str:
        """host:port, the form a Prometheus scrape config takes."""
        if self._server is None:
            raise RuntimeError("the exporter is not started")
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"{host}:{port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}/metrics"

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, self._host, self._port)
        return self.url

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(5):
                head = await reader.readuntil(b"\r\n\r\n")
            method, path = [*head.split(b"\r\n", 1)[0].split(b" "), b"", b""][:2]
            if method == b"GET" and path.split(b"?")[0] == b"/metrics":
                status, ctype = b"200 OK", b"text/plain; version=0.0.4; charset=utf-8"
                body = (render(self.containers) + await self._relayed()).encode()
            else:
                status, ctype, body = b"404 Not Found", b"text/plain", b"only /metrics here\n"
            writer.write(
                b"HTTP/1.1 "
                + status
                + b"\r\nContent-Type: "
                + ctype
                + b"\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\nConnection: close\r\n\r\n"
                + body
            )
            await writer.drain()
        except (
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
        ):
            pass  # a client that hung up or sent no request gets nothing
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
