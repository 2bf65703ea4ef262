"""The example CapacityTest, applied with kubectl to a real API server, run by the operator.

Two clusters serve: with PLIMSOLL_E2E_KUBECONFIG, any real cluster (kind, k3d)
whose nodes can run the images plimsoll-generator and plimsoll-mock (see the
README: kind load / k3d image import), with the operator as that kubeconfig's
user; without it, the session's control plane (`control_plane.py`) with the
test kubelet (`real_kubelet.py`) and a real Prometheus, with the operator as the
chart's ServiceAccount. The kubelet runs commands, not images, so there the
target is `target_app.py` instead of nginx. Without either (a fresh clone, no
cluster) the tests skip and say how to run them.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.api.crd import render_crd
from tests.controller.apiserver_fixtures import Installed
from tests.controller.conftest import TARGET_APP, OperatorProcess
from tests.controller.threaded_kubelet import ThreadedKubelet
from tests.metrics.conftest import _all_scraped, launch_prometheus

KUBECONFIG = os.environ.get("PLIMSOLL_E2E_KUBECONFIG")
# A Prometheus the operator can reach that scrapes cAdvisor (e.g. kube-prometheus-stack).
PROMETHEUS = os.environ.get("PLIMSOLL_E2E_PROMETHEUS_URL")
EXAMPLE = Path(__file__).with_name("e2e-capacitytest.yaml")
pytestmark = pytest.mark.slow

Kubectl = Callable[..., "subprocess.CompletedProcess[str]"]


@dataclass
class Cluster:
    kubectl: Kubectl
    namespace: str
    example: dict[str, Any]
    server_metrics: bool  # a Prometheus serves the target's CPU and memory


def _external_kubectl(*args: str, stdin: str | None = None, check: bool = True) -> Any:
    env = {**os.environ, "KUBECONFIG": KUBECONFIG or ""}
    return subprocess.run(
        ["kubectl", *args], input=stdin, env=env, text=True, capture_output=True, check=check
    )


def _external() -> Iterator[Cluster]:
    _external_kubectl("apply", "-f", "-", stdin=render_crd())
    _external_kubectl(
        "wait", "--for=condition=Established", "crd/capacitytests.plimsoll.dev", "--timeout=60s"
    )
    example = yaml.safe_load(EXAMPLE.read_text())
    if PROMETHEUS:
        example["spec"]["metrics"] = {"prometheusUrl": PROMETHEUS}
    env = {**os.environ, "KUBECONFIG": KUBECONFIG or ""}
    operator = subprocess.Popen(
        [sys.executable, "-c", "from plimsoll.cli.app import main; main()", "operator", "-A"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    yield Cluster(_external_kubectl, "default", example, bool(PROMETHEUS))
    operator.terminate()
    operator.wait(timeout=60)


def _on_control_plane(installed: Installed, home: Path) -> Iterator[Cluster]:
    plane = installed.plane
    namespace = f"e2e-{uuid.uuid4().hex[:6]}"
    plane.kubectl("create", "namespace", namespace)
    (home / "kubelet").mkdir()
    threaded = ThreadedKubelet(plane, home / "kubelet")
    kubelet = threaded.start()
    prometheus = launch_prometheus(home / "prom", [kubelet.exporter.address], "500ms")
    (home / "operator").mkdir()
    operator = OperatorProcess(
        installed.kubeconfigs["plimsoll"], home / "operator", env=installed.envs["plimsoll"]
    )
    try:
        deadline = time.monotonic() + 15
        while not _all_scraped(prometheus.url, 1) and time.monotonic() < deadline:
            time.sleep(0.2)
        operator.start(prometheus=prometheus.url)
        example = yaml.safe_load(EXAMPLE.read_text())
        spec = example["spec"]
        spec["target"] |= {"command": ["python", str(TARGET_APP)], "env": {"WORK_MS": "1"}}
        spec["trial"], spec["search"]["levels"] = {"duration": "3s", "warmUp": "0s"}, [20]
        spec["metrics"] = {"prometheusUrl": prometheus.url, "scrapeInterval": "500ms"}
        example["metadata"]["namespace"] = namespace
        yield Cluster(plane.kubectl, namespace, example, server_metrics=True)
    finally:
        plane.kubectl("delete", "capacitytests", "--all", "-n", namespace, "--timeout=60s")
        asyncio.run(operator.terminate())
        prometheus.stop()
        threaded.stop()


@pytest.fixture(scope="module")
def e2e_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    if KUBECONFIG:
        yield from _external()
    else:  # skips, or fails under CI=true, without the control plane
        installed = request.getfixturevalue("control_plane_installed")
        yield from _on_control_plane(installed, tmp_path_factory.mktemp("e2e"))


def _get(cluster: Cluster, name: str) -> dict[str, Any]:
    found = cluster.kubectl("get", "capacitytest", name, "-n", cluster.namespace, "-o", "json")
    return dict(json.loads(found.stdout))


def test_schema_rejects_a_bad_duration_with_the_field_named(e2e_cluster: Cluster) -> None:
    cluster = e2e_cluster
    bad = json.loads(json.dumps(cluster.example))
    bad["metadata"]["name"] = "e2e-bad"
    bad["spec"]["trial"]["duration"] = "soon"
    result = cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(bad), check=False)
    assert result.returncode != 0
    assert "spec.trial.duration" in result.stderr


def test_example_runs_with_status_subresource_printer_columns_and_cleanup(
    e2e_cluster: Cluster,
) -> None:
    cluster = e2e_cluster
    ns = ["-n", cluster.namespace]
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(cluster.example))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        status = _get(cluster, "e2e-quick").get("status", {})
        if status.get("phase") in ("Succeeded", "Failed"):
            break
        time.sleep(1)
    if cluster.server_metrics:
        assert status["phase"] == "Succeeded", status
    else:  # without server metrics every step is invalid, and the status says why
        assert status["phase"] == "Failed", status
        assert "Prometheus" in json.dumps(status["steps"])
    # The status subresource: a patch through the main resource cannot touch it.
    patch = '{"status":{"phase":"Pending"}}'
    cluster.kubectl("patch", "capacitytest", "e2e-quick", *ns, "--type=merge", "-p", patch)
    assert _get(cluster, "e2e-quick")["status"]["phase"] == status["phase"]
    columns = cluster.kubectl("get", "capacitytest", "e2e-quick", *ns).stdout.split()
    assert columns[:7] == ["NAME", "PHASE", "CEILING", "UNIT", "LIMITED-BY", "CHANGE", "STEPS"]
    cluster.kubectl("delete", "capacitytest", "e2e-quick", *ns, "--timeout=120s")
    gone = cluster.kubectl("get", "namespace", status["namespace"], check=False)
    assert gone.returncode != 0 or "Terminating" in gone.stdout
