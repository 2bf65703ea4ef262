"""A test kubelet for the real API server: runs the pods the scheduler binds to its node.

The control plane (`control_plane.py`) has no kubelet. This one registers a Node
(`node.py`) and, four times a second, lists the pods bound to it. Each new pod's
first container starts as a real process on its own 127.0.0.x address (Linux
routes all of 127/8 to loopback), with its environment resolved as a kubelet and
cluster DNS would (`pod_env.py`), in real cgroups sized by its limits when it has
them (`pinning.py`), and published under cAdvisor's metric names for a real
Prometheus to scrape. Its status (`pod_status.py`) is patched back: Running with
its IP, Ready once its readiness probe answers, restarts and OOM kills when the
process dies under `restartPolicy: Always`, Succeeded or Failed when it ends
otherwise. A pod being deleted has its process stopped (SIGTERM, then SIGKILL
after a short grace) and is then confirmed gone with grace period 0, no sooner
than a second later, as a kubelet does; a pod that disappeared has its process and cgroup removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from plimsoll.metrics.exporter import CadvisorExporter, ExportedContainer
from plimsoll.platforms.local.exported import _oom_kills
from tests.controller import node, pod_addresses
from tests.controller.admin_api import AdminApi, ApiError
from tests.controller.kubelet import _listening_ips
from tests.controller.pinning import NodeCgroups
from tests.controller.pod_env import expand, resolve
from tests.controller.pod_status import ContainerState, pod_status, terminated
from tests.controller.probe import probe_ok
from tests.controller.service_proxy import ServiceProxies

KEPT_ENV = ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV", "PLIMSOLL_TEST_MARK")
GRACE = 2.0  # seconds a deleted pod's process gets after SIGTERM
CONFIRM_AFTER = 1.0  # seconds before a deletion is confirmed


@dataclass
class Running:
    pod: dict[str, Any]
    argv: list[str]
    env: dict[str, str]
    state: ContainerState
    since: str
    reported: dict[str, Any] | None = None
    # Set by each (re)start of the process:
    popen: subprocess.Popen[bytes] = field(init=False)
    exported: ExportedContainer = field(init=False)

    @property
    def key(self) -> tuple[str, str]:
        return self.pod["metadata"]["namespace"], self.pod["metadata"]["name"]


@dataclass
class RealKubelet:
    api: AdminApi
    workdir: Path
    name: str = field(default_factory=lambda: f"test-node-{uuid.uuid4().hex[:6]}")
    exporter: CadvisorExporter = field(default_factory=CadvisorExporter)
    pinning: NodeCgroups = field(default_factory=NodeCgroups)
    running: dict[str, Running] = field(default_factory=dict)  # by pod uid
    errors: list[str] = field(default_factory=list)
    _deleting: dict[str, float] = field(default_factory=dict)  # pod uid -> first seen deleted
    _next_ip: int = field(default_factory=lambda: random.randrange(2, 242))
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # kube-proxy's stand-in: on, a Service name resolves to a stable address whose
    # connections follow the Service to whichever pod is ready behind it now.
    services: ServiceProxies | None = None
    labels: dict[str, str] = field(default_factory=dict)  # the Node's, e.g. its zone
    # Pod addresses PREFIX.2 .. PREFIX.241 on `lo` instead of 127.0.0.x, so the controller
    # manager can write the Services' EndpointSlices (`pod_addresses`); None: loopback.
    pod_prefix: str | None = None
    _claimed: set[str] = field(default_factory=set)

    async def start(self) -> None:
        await self.exporter.start()
        await node.register(self.api, self.name, self.labels)
        self._tasks = [
            asyncio.create_task(self._loop()),
            asyncio.create_task(node.heartbeat(self.api, self.name)),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for uid in list(self.running):
            self._release(uid)
        await node.unregister(self.api, self.name)
        await self.exporter.stop()
        if self.services is not None:
            await self.services.stop()

    def pids(self, namespace: str) -> list[int]:
        return [
            r.popen.pid
            for r in self.running.values()
            if r.key[0] == namespace and r.popen.poll() is None
        ]

    async def _loop(self) -> None:
        async with httpx.AsyncClient(timeout=1.0) as http:
            while True:
                try:
                    await self._sync(http)
                except Exception as exc:  # a broken tick must not stop the node
                    self.errors.append(repr(exc))
                    print(f"test kubelet: {exc!r}", file=sys.stderr)
                await asyncio.sleep(0.25)

    async def _sync(self, http: httpx.AsyncClient) -> None:
        pods = await self.api.items("/api/v1/pods", fieldSelector=f"spec.nodeName={self.name}")
        by_uid = {p["metadata"]["uid"]: p for p in pods}
        for uid in [u for u in self.running if u not in by_uid]:
            self._release(uid)
        for uid, pod in by_uid.items():
            if pod["metadata"].get("deletionTimestamp"):
                await self._confirm_deletion(uid, pod)
            elif uid in self.running:
                self.running[uid].pod = pod
                await self._report(uid, self.running[uid], http)
            elif (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                await self._start(uid, pod)

    async def _start(self, uid: str, pod: dict[str, Any]) -> None:
        container = pod["spec"]["containers"][0]
        ip = self._pick_ip()
        env = await resolve(self.api, pod, ip, container, self.services)
        if env is None:
            return  # a ConfigMap or a Service backend is not there yet: try next tick
        self._next_ip = self._next_ip % 240 + 2
        if self.pod_prefix is not None:
            if not pod_addresses.claim(ip):
                return  # another kubelet's pod took it meanwhile: the next one, next tick
            self._claimed.add(ip)
        argv = [expand(a, env) for a in container.get("command", []) + container.get("args", [])]
        if argv and argv[0] == "python":
            argv[0] = sys.executable
        full_env = {k: v for k, v in os.environ.items() if k in KEPT_ENV} | env
        since = node.now()
        state = ContainerState(container["name"], container.get("image", ""), ip, since, 0)
        run = Running(pod, argv, full_env, state, since)
        self._spawn(run)
        self.running[uid] = run

    def _spawn(self, run: Running) -> None:
        """Start (or restart) the container's process, in a fresh cgroup when it has limits."""
        container = run.pod["spec"]["containers"][0]
        env = dict(run.env)
        group = self.pinning.pin(run.key, container)
        argv = self.pinning.command(run.argv, env, group) if group is not None else run.argv
        log = (self.workdir / f"{run.key[0]}-{run.key[1]}.log").open("ab")
        run.popen = subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        run.state.pid, run.state.started_at = run.popen.pid, node.now()
        run.state.ready, run.state.changed_at = False, run.state.started_at
        paths = self.pinning.paths(group) if group is not None else None
        fresh = ExportedContainer(
            run.key[0], run.key[1], container["name"],
            paths=paths, pgid=None if paths else run.popen.pid,
            restarts=run.state.restarts,
            last_terminated_reason=(run.state.last_terminated or {}).get("reason"),
        )  # fmt: skip
        if getattr(run, "exported", None) in self.exporter.containers:
            self.exporter.containers.remove(run.exported)
        self.exporter.add(fresh)
        run.exported = fresh

    async def _report(self, uid: str, run: Running, http: httpx.AsyncClient) -> None:
        code = run.popen.poll()
        phase = "Running"
        if code is not None and run.state.ended is None:
            code = 128 - code if code < 0 else code  # killed by a signal: 137 for SIGKILL
            reason = "Completed" if code == 0 else "Error"
            if run.exported.paths is not None and _oom_kills(run.exported.paths) > 0:
                reason = "OOMKilled"
            ended = terminated(code, reason, run.state.started_at, node.now())
            self._stop_process(run)
            policy = run.pod["spec"].get("restartPolicy", "Always")
            if policy == "Always" or (policy == "OnFailure" and code != 0):
                run.state.restarts += 1
                run.state.last_terminated = ended
                self._spawn(run)
            else:  # the pod is over: its process and cgroup are gone, and so is its series
                run.state.ended, run.state.changed_at = ended, ended["finishedAt"]
                with contextlib.suppress(ValueError):
                    self.exporter.containers.remove(run.exported)
        if run.state.ended is not None:
            phase = "Succeeded" if run.state.ended["exitCode"] == 0 else "Failed"
        elif not run.state.ready:
            probe = run.pod["spec"]["containers"][0].get("readinessProbe")
            if await probe_ok(http, run.state.ip, probe):
                run.state.ready, run.state.changed_at = True, node.now()
        status = pod_status(run.state, phase, run.since)
        if status != run.reported:
            path = f"/api/v1/namespaces/{run.key[0]}/pods/{run.key[1]}/status"
            try:
                await self.api.patch(path, {"status": status})
                run.reported = status
            except ApiError as exc:
                if exc.code != 404:
                    raise

    async def _confirm_deletion(self, uid: str, pod: dict[str, Any]) -> None:
        """SIGTERM at once; confirm no sooner than CONFIRM_AFTER, as a real kubelet takes
        a sync period or more, so the operator always meets a pod that is still ending."""
        run = self.running.get(uid)
        now = asyncio.get_running_loop().time()
        if uid not in self._deleting:
            self._deleting[uid] = now
            if run is not None and run.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(run.popen.pid, signal.SIGTERM)
        if now - self._deleting[uid] < CONFIRM_AFTER:
            return
        if run is not None and run.popen.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(run.popen.wait, GRACE)
        del self._deleting[uid]
        self._release(uid)
        meta = pod["metadata"]
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
        await self.api.delete(path, gracePeriodSeconds="0")

    def _stop_process(self, run: Running) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.popen.pid, signal.SIGKILL)
        run.popen.wait(timeout=10)
        for problem in self.pinning.release(run.key):
            print(f"test kubelet: cgroup clean-up: {problem}", file=sys.stderr)

    def _release(self, uid: str) -> None:
        run = self.running.pop(uid, None)
        if run is None:
            return
        self._stop_process(run)
        if run.state.ip in self._claimed:
            self._claimed.discard(run.state.ip)
            pod_addresses.release(run.state.ip)
        with contextlib.suppress(ValueError):
            self.exporter.containers.remove(run.exported)

    def _pick_ip(self) -> str:
        """The next 127.0.0.x that no one listens on (ours, or another session's)."""
        busy = {r.state.ip for r in self.running.values()} | _listening_ips()
        prefix = self.pod_prefix or "127.0.0."
        for _ in range(240):
            ip = f"{prefix}{self._next_ip}"
            if ip not in busy:
                return ip
            self._next_ip = self._next_ip % 240 + 2
        raise RuntimeError("every 127.0.0.x address has a listener")
