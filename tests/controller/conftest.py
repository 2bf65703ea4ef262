"""Fixtures for the operator tests: the real control plane, the emulated cluster, the operator.

Most tests run against the real Kubernetes control plane (`apiserver_fixtures.py`:
`apiserver`, `node_kubelet`, and here `sa_operator`, the operator logged in as the
chart's ServiceAccount). `cluster` serves kmock's emulated API server
(`FakeCluster`) for what a real one refuses here, the pod proxy to a loopback pod
IP; `kubelet` is its fake kubelet. `OperatorProcess` starts the real
`plimsoll operator` command as a subprocess against a kubeconfig, so a test can
SIGKILL it mid-run and start another, exactly as a crash and a restart.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import kmock
import pytest

from tests.controller.apiserver_fixtures import (
    ApiServer,
    apiserver,
    control_plane_installed,
    node_kubelet,
)
from tests.controller.fake_cluster import FakeCluster
from tests.controller.kubelet import Kubelet
from tests.kube.flaky_server import FlakyServer

TARGET_APP = Path(__file__).with_name("target_app.py")
TEST_AGENT = "plimsoll-tests"  # the test's own calls, told apart from the operator's
CT_PATH = "/apis/plimsoll.dev/v1alpha1/namespaces/default/capacitytests"


@dataclass
class Cluster:
    emulator: FakeCluster
    url: str
    kubeconfig: Path
    api: httpx.AsyncClient

    async def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        meta = body["metadata"]
        meta.setdefault("namespace", "default")
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("generation", 1)
        meta.setdefault("resourceVersion", "1")  # kopf's JSON patches test it
        response = await self.api.post(CT_PATH, json=body)
        response.raise_for_status()
        return body

    async def patch(self, name: str, patch: dict[str, Any]) -> None:
        response = await self.api.patch(
            f"{CT_PATH}/{name}",
            json=patch,
            headers={"Content-Type": "application/merge-patch+json"},
        )
        response.raise_for_status()

    async def delete(self, name: str) -> None:
        (await self.api.delete(f"{CT_PATH}/{name}")).raise_for_status()

    def get(self, name: str) -> dict[str, Any] | None:
        for ns, n, obj in self.emulator.live("capacitytests"):
            if ns == "default" and n == name:
                return obj
        return None

    def status(self, name: str) -> dict[str, Any]:
        obj = self.get(name) or {}
        return dict(obj.get("status") or {})

    async def wait(self, check: Callable[[], Any], limit: float, what: str) -> Any:
        deadline = asyncio.get_running_loop().time() + limit
        while asyncio.get_running_loop().time() < deadline:
            value = check()
            if value:
                return value
            await asyncio.sleep(0.2)
        raise AssertionError(f"timed out after {limit}s waiting for {what}")


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with FakeCluster() as emulator, kmock.Server(emulator) as server:
        url = str(server.url).rstrip("/")
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
            f"clusters: [{{name: fake, cluster: {{server: '{url}'}}}}]\n"
            "users: [{name: fake, user: {token: fake-token}}]\n"
            "contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: default}}]\n"
        )
        async with httpx.AsyncClient(base_url=url, headers={"User-Agent": TEST_AGENT}) as api:
            yield Cluster(emulator, url, kubeconfig, api)


@pytest.fixture
async def kubelet(cluster: Cluster, tmp_path: Path) -> AsyncIterator[Kubelet]:
    node = Kubelet(cluster.emulator, tmp_path)
    await node.start()
    yield node
    await node.stop()


class OperatorProcess:
    def __init__(
        self,
        kubeconfig: Path,
        log_dir: Path,
        scope: tuple[str, ...] = ("-A",),
        env: dict[str, str] | None = None,
    ) -> None:
        self.kubeconfig, self.log_dir, self.scope = kubeconfig, log_dir, scope
        self.env = dict(env or {})  # e.g. the chart's PLIMSOLL_* identity variables
        self.process: subprocess.Popen[bytes] | None = None
        self.count = 0
        self.metrics_port = 0

    def start(
        self, *extra: str, prometheus: str | None = None, env: dict[str, str] | None = None
    ) -> None:
        """Start the operator; `prometheus` is a server the test's CRs may name (the
        operator refuses any Prometheus URL its configuration does not list); `env` adds
        to its environment."""
        self.count += 1
        log = (self.log_dir / f"operator-{self.count}.log").open("wb")
        env = {**os.environ, **self.env, "KUBECONFIG": str(self.kubeconfig), **(env or {})}
        if prometheus is not None:
            env["PLIMSOLL_ALLOWED_PROMETHEUS_URLS"] = prometheus
        env.pop("KUBERNETES_SERVICE_HOST", None)
        command = [
            sys.executable,
            "-m",
            "plimsoll.cli.app",
            "operator",
            *self.scope,
            "--reach",
            "pod-ip",
            *extra,
        ]
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from plimsoll.cli.app import main; main()", *command[3:]],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        log.close()

    def log(self) -> str:
        return "\n".join(p.read_text()[-4000:] for p in sorted(self.log_dir.glob("operator-*.log")))

    def kill(self) -> None:
        """SIGKILL: no clean-up handler runs, as in a node crash or an OOM kill."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    async def terminate(self, limit: float = 40.0) -> int | None:
        """SIGTERM, as Kubernetes stops a pod; its exit code (None if it had to be killed).
        Waited for without blocking the loop: the emulated API server runs on it, and
        the operator may still talk to it while it shuts down."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        os.killpg(self.process.pid, signal.SIGTERM)
        deadline = asyncio.get_running_loop().time() + limit
        while self.process.poll() is None:
            if asyncio.get_running_loop().time() > deadline:
                self.kill()
                return None
            await asyncio.sleep(0.1)
        return self.process.returncode


@pytest.fixture
async def operator(cluster: Cluster, tmp_path: Path) -> AsyncIterator[OperatorProcess]:
    logs = tmp_path / "operator-logs"
    logs.mkdir()
    process = OperatorProcess(cluster.kubeconfig, logs)
    yield process
    await process.terminate()


@pytest.fixture
async def sa_operator(apiserver: ApiServer, tmp_path: Path) -> AsyncIterator[OperatorProcess]:
    """The operator as the cluster-wide release's ServiceAccount (the chart's RBAC only)."""
    logs = tmp_path / "operator-logs"
    logs.mkdir()
    installed = apiserver.installed
    process = OperatorProcess(
        installed.kubeconfigs["plimsoll"], logs, env=installed.envs["plimsoll"]
    )
    yield process
    process.kill()  # no graceful stop needed (a test of its own); `apiserver` cleans up


def forbidden(process: OperatorProcess) -> list[str]:
    """Lines of the operator's log where the API server refused a call (403)."""
    text = "\n".join(p.read_text() for p in sorted(process.log_dir.glob("operator-*.log")))
    # Past each line's timestamp, whose milliseconds may well be 403.
    return [line for line in text.splitlines() if _REFUSED.search(_STAMP.sub("", line))]


_STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")
_REFUSED = re.compile(r"\b403\b|forbidden", re.IGNORECASE)


def quickstart(
    name: str, prometheus_url: str | None, levels: list[int] | None = None, duration: str = "3s"
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "target": {
            "image": "plimsoll-test/target:dev",
            "command": ["python", str(TARGET_APP)],
            "resources": {"cpu": "1", "memory": "256Mi"},
            "env": {"WORK_MS": "1"},
        },
        "upstream": {"routes": [{"name": "work", "path": "/work", "latency": {"fixed": "2ms"}}]},
        "workload": {
            "model": "rate",
            "arrival": "uniform",
            "mix": [{"name": "work", "path": "/work"}],
        },
        "trial": {"duration": duration, "warmUp": "0s"},
        "search": {"strategy": "steps", "levels": levels or [20, 40, 60], "repeats": 0},
        "passWhen": {"latency": [{"quantile": "p99", "below": "500ms"}]},
        "generators": {"replicas": 1, "processes": 1},
        # These tests check the operator's mechanics on a shared machine: a failure
        # stays a fail however busy the host (tests/run/test_contention.py checks that).
        "noise": {"repeatWhenBusy": False},
        # Nor about which resource binds: no confirmation trials at twice the shape.
        "attribution": {"confirm": False},
    }
    if prometheus_url:
        spec["metrics"] = {"prometheusUrl": prometheus_url, "scrapeInterval": "500ms"}
    return {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": name},
        "spec": spec,
    }


__all__ = ["apiserver", "control_plane_installed", "node_kubelet"]  # fixtures, re-exported

StartPrometheus = Callable[..., Awaitable[Any]]


def calls_outside_rbac(cluster: Cluster) -> list[tuple[str, str, str]]:
    """Every API call the operator made that `plimsoll.controller.rbac.RULES` does not allow."""
    from plimsoll.controller.rbac import allows, request_attributes

    outside = []
    for method, path, query, agent in cluster.emulator.calls:
        if agent == TEST_AGENT:
            continue
        attributes = request_attributes(method, path, query)
        if attributes is not None and not allows(*attributes):
            outside.append(attributes)
    return sorted(set(outside))


@pytest.fixture
async def server() -> AsyncIterator[FlakyServer]:
    """An API server stand-in on 127.0.0.1 that records what is written (and can be told
    to fail): what the status writers and the report's ConfigMap send, read back."""
    flaky = FlakyServer()
    await flaky.start()
    yield flaky
    await flaky.stop()
