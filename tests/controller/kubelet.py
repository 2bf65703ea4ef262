"""A fake kubelet on the emulated API server (`fake_cluster.py`), for the pod-proxy test.

The tests on the real API server use `real_kubelet.py`, which shares its cgroup
pinning and its scan of listening addresses.

`Kubelet` plays the node: for each Pod it sees it resolves the container's env
the way a kubelet does (values, `$(VAR)` expansion, the downward API's
`status.podIP`, ConfigMap keys), plays cluster DNS by replacing the Service
names the operator injected (`svc.ns.svc`) with a ready backing pod's IP, and
starts the container's command as a real process on its own 127.0.0.x address
(Linux routes all of 127/8 to loopback). It reports the pod IP and the Ready
condition from the pod's readiness probe, kills processes whose pods are
deleted, runs Jobs' pods to completion, and publishes each process under
cAdvisor's metric names for a real Prometheus to scrape. A container with CPU
and memory limits runs in real cgroups of that size (`pinning.py`), read back by
its cgroup as cAdvisor does; the others are read by process group.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import kmock

from plimsoll.metrics.exporter import CadvisorExporter, ExportedContainer
from tests.controller.fake_cluster import FakeCluster
from tests.controller.pinning import NodeCgroups

_SERVICE_NAME = re.compile(r"\b([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?(?::(\d+))?")
_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class Process:
    key: tuple[str, str]
    ip: str
    popen: subprocess.Popen[bytes]
    started: str
    probe: dict[str, Any] | None
    container: ExportedContainer
    ready: bool = False


@dataclass
class Kubelet:
    cluster: FakeCluster
    workdir: Path
    exporter: CadvisorExporter = field(default_factory=CadvisorExporter)
    pinning: NodeCgroups = field(default_factory=NodeCgroups)
    processes: dict[tuple[str, str], Process] = field(default_factory=dict)
    # Another test session on this host has its own kubelet: start anywhere in 2..241.
    _next_ip: int = field(default_factory=lambda: random.randrange(2, 242))
    _task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.exporter.start()
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for key in list(self.processes):
            self._kill(key)
        await self.exporter.stop()

    def pids(self, namespace: str) -> list[int]:
        return [
            p.popen.pid
            for (ns, _), p in self.processes.items()
            if ns == namespace and p.popen.poll() is None
        ]

    async def _loop(self) -> None:
        async with httpx.AsyncClient(timeout=1.0) as http:
            while True:
                try:
                    await self._sync(http)
                except Exception as exc:  # a broken tick must not stop the node
                    print(f"kubelet: {exc!r}", file=sys.stderr)
                await asyncio.sleep(0.1)

    async def _sync(self, http: httpx.AsyncClient) -> None:
        self._jobs()
        pods = {(ns, name): pod for ns, name, pod in self.cluster.live("pods")}
        for key, process in list(self.processes.items()):
            pod = pods.get(key)
            if pod is None or pod.get("status", {}).get("startTime") != process.started:
                self._kill(key)
        for key, pod in pods.items():
            if key not in self.processes and pod.get("status", {}).get("phase") not in (
                "Succeeded",
                "Failed",
            ):
                self._start(key, pod)
        for key, process in list(self.processes.items()):
            await self._report(key, process, http)
        for name, ns in list(self.cluster.namespaces.items()):
            if ns["metadata"].get("deletionTimestamp"):
                for key in [k for k in self.processes if k[0] == name]:
                    self._kill(key)
                self.cluster.drop_namespace_objects(name)
                del self.cluster.namespaces[name]

    def _resolve_env(
        self, ns: str, pod: dict[str, Any], ip: str, container: dict[str, Any]
    ) -> dict[str, str] | None:
        env: dict[str, str] = {}
        for item in container.get("env", []):
            if "value" in item:
                value = _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), item["value"])
            else:
                ref = item["valueFrom"]
                if "fieldRef" in ref:
                    path = ref["fieldRef"]["fieldPath"]
                    value = {
                        "status.podIP": ip,
                        "metadata.name": pod["metadata"]["name"],
                        "metadata.namespace": ns,
                    }[path]
                elif "secretKeyRef" in ref:
                    key = ref["secretKeyRef"]
                    found = {n: s for sns, n, s in self.cluster.live("secrets") if sns == ns}
                    if key["name"] not in found:
                        return None  # a kubelet waits for the Secret too
                    secret = found[key["name"]]
                    if key["key"] in (secret.get("data") or {}):
                        value = base64.b64decode(secret["data"][key["key"]]).decode()
                    else:  # the emulator keeps what was sent
                        value = secret["stringData"][key["key"]]
                else:
                    key = ref["configMapKeyRef"]
                    maps = {n: cm for cns, n, cm in self.cluster.live("configmaps") if cns == ns}
                    if key["name"] not in maps:
                        return None  # a kubelet waits for the ConfigMap too
                    value = maps[key["name"]]["data"][key["key"]]
            resolved = self._dns(value)
            if resolved is None:
                return None
            env[item["name"]] = resolved
        return env

    def _dns(self, value: str) -> str | None:
        unresolved = False

        def swap(match: re.Match[str]) -> str:
            nonlocal unresolved
            name, ns, port = match.group(1), match.group(2), match.group(3)
            services = {n: s for sns, n, s in self.cluster.live("services") if sns == ns}
            service = services.get(name)
            if service is None:
                unresolved = True
                return match.group(0)
            selector = service["spec"]["selector"]
            for (pns, pname), process in self.processes.items():
                pod = next(
                    (p for n2, n, p in self.cluster.live("pods") if n2 == pns and n == pname), None
                )
                if (
                    pns == ns
                    and pod
                    and process.ready
                    and all(
                        pod["metadata"].get("labels", {}).get(k) == v for k, v in selector.items()
                    )
                ):
                    return process.ip + (f":{port}" if port else "")
            unresolved = True
            return match.group(0)

        result = _SERVICE_NAME.sub(swap, value)
        return None if unresolved else result

    def _start(self, key: tuple[str, str], pod: dict[str, Any]) -> None:
        ns, name = key
        container = pod["spec"]["containers"][0]
        ip = self._pick_ip()
        env = self._resolve_env(ns, pod, ip, container)
        if env is None:
            return
        self._next_ip = self._next_ip % 240 + 2
        argv = [
            _VAR.sub(lambda m: env.get(m.group(1), m.group(0)), a)
            for a in container.get("command", []) + container.get("args", [])
        ]
        if argv and argv[0] == "python":
            argv[0] = sys.executable
        log = (self.workdir / f"{ns}-{name}.log").open("wb")
        base_env = {
            k: v
            for k, v in os.environ.items()
            if k in ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV")
        }
        full_env = {**base_env, **env}
        group = self.pinning.pin(key, container)
        if group is not None:
            argv = self.pinning.command(argv, full_env, group)
        popen = subprocess.Popen(
            argv, env=full_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        started = f"{_now()}#{popen.pid}"
        labels = {"namespace": ns, "pod": name, "container": container["name"]}
        exported = (
            ExportedContainer(**labels, paths=self.pinning.paths(group))
            if group is not None
            else ExportedContainer(**labels, pgid=popen.pid)
        )
        self.exporter.add(exported)
        self.processes[key] = Process(
            key, ip, popen, started, container.get("readinessProbe"), exported
        )
        conditions = [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Ready", "status": "False"},
        ]
        status = {"phase": "Running", "podIP": ip, "hostIP": "127.0.0.1", "startTime": started}
        self.cluster.patch_object(
            "pods",
            ns,
            name,
            {"spec": {"nodeName": "fake-node"}, "status": {**status, "conditions": conditions}},
        )

    async def _report(
        self, key: tuple[str, str], process: Process, http: httpx.AsyncClient
    ) -> None:
        ns, name = key
        code = process.popen.poll()
        if code is not None:
            phase = "Succeeded" if code == 0 else "Failed"
            self.cluster.patch_object(
                "pods",
                ns,
                name,
                {"status": {"phase": phase, "conditions": [{"type": "Ready", "status": "False"}]}},
            )
            self._kill(key)
            return
        if process.ready:
            return
        probe = process.probe or {}
        ready = True
        if "httpGet" in probe:
            get = probe["httpGet"]
            try:
                response = await http.get(f"http://{process.ip}:{get['port']}{get['path']}")
                ready = response.status_code == 200
            except httpx.HTTPError:
                ready = False
        elif "tcpSocket" in probe:
            try:
                _, writer = await asyncio.open_connection(process.ip, probe["tcpSocket"]["port"])
                writer.close()
            except OSError:
                ready = False
        if ready:
            process.ready = True
            self.cluster.patch_object(
                "pods",
                ns,
                name,
                {
                    "status": {
                        "conditions": [
                            {"type": "PodScheduled", "status": "True"},
                            {"type": "Ready", "status": "True"},
                        ]
                    }
                },
            )

    def _pick_ip(self) -> str:
        """The next 127.0.0.x that no one listens on (ours, or another session's)."""
        busy = {p.ip for p in self.processes.values()} | _listening_ips()
        for _ in range(240):
            ip = f"127.0.0.{self._next_ip}"
            if ip not in busy:
                return ip
            self._next_ip = self._next_ip % 240 + 2
        raise RuntimeError("every 127.0.0.x address has a listener")

    def _kill(self, key: tuple[str, str]) -> None:
        process = self.processes.pop(key, None)
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.popen.pid, signal.SIGKILL)
        process.popen.wait(timeout=10)
        with contextlib.suppress(ValueError):
            self.exporter.containers.remove(process.container)
        for problem in self.pinning.release(key):
            print(f"kubelet: cgroup clean-up: {problem}", file=sys.stderr)

    def _jobs(self) -> None:
        """The Job controller: one pod per Job, and the Job's status from its pod."""
        pods = {(ns, n): p for ns, n, p in self.cluster.live("pods")}
        for ns, name, job in self.cluster.live("jobs"):
            if job.get("status", {}).get("succeeded") or job.get("status", {}).get("failed"):
                continue
            pod_name = f"{name}-run"
            pod = pods.get((ns, pod_name))
            if pod is None:
                template = job["spec"]["template"]
                labels = template["metadata"]["labels"]
                meta = {"name": pod_name, "namespace": ns, "labels": labels}
                body = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": meta,
                    "spec": template["spec"],
                }
                self.cluster.objects[kmock.resource("", "v1", "pods"), ns, pod_name] = body
                continue
            phase = pod.get("status", {}).get("phase")
            if phase == "Succeeded":
                self.cluster.patch_object("jobs", ns, name, {"status": {"succeeded": 1}})
            elif phase == "Failed":
                self.cluster.patch_object(
                    "jobs",
                    ns,
                    name,
                    {
                        "status": {
                            "failed": 1,
                            "conditions": [
                                {"type": "Failed", "status": "True", "message": "pod failed"}
                            ],
                        }
                    },
                )


def _listening_ips() -> set[str]:
    """IPv4 addresses with a listening TCP socket, from /proc/net/tcp."""
    found = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "0A":  # TCP_LISTEN
                packed = bytes.fromhex(fields[1].split(":")[0])[::-1]  # little-endian
                found.add(".".join(str(b) for b in packed))
    return found


def wait_for(condition: Any, timeout: float, interval: float = 0.2) -> Any:
    """Poll a sync `condition()` until truthy (returns it) or fail with `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s")
