"""The local platform's processes as Prometheus sees them: names, restarts, selectors."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from plimsoll.metrics.exporter import CadvisorExporter, render
from plimsoll.metrics.promql import Selector
from plimsoll.platforms.local.exported import LocalExport, pod_of, role_selectors


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "30"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


def test_roles_get_the_pod_names_the_kubernetes_platform_gives_them() -> None:
    assert pod_of("target") == ("target", "target")
    assert pod_of("mock") == ("mock-0", "mock")
    assert pod_of("generator") == ("generator-0", "generator")
    assert pod_of("generator-3") == ("generator-3", "generator")
    assert pod_of("store") == ("svc-store", "store")
    assert pod_of("mock-auth") == ("mock-auth-0", "mock")  # a named mock, as on Kubernetes
    assert role_selectors("run-1", [], ["auth"])["mock-auth"] == Selector(
        "run-1", "mock-auth-[0-9]+"
    )
    selectors = role_selectors("run-1", ["store"])
    assert selectors == {
        "target": Selector("run-1", "target", container="target"),
        "mock": Selector("run-1", "mock-[0-9]+"),
        "generator": Selector("run-1", "generator-[0-9]+"),
        "store": Selector("run-1", "svc-store"),
    }


def test_a_restart_is_counted_and_carried_over_to_the_new_process(
    sleeper: subprocess.Popen[bytes],
) -> None:
    exporter = CadvisorExporter()
    export = LocalExport(exporter, "run-1")
    export.add("target", pgid=sleeper.pid)
    export.add("generator-1", pgid=sleeper.pid)
    labels = 'namespace="run-1",pod="target",container="target"'
    text = render(exporter.containers)
    assert f"kube_pod_container_status_restarts_total{{{labels}}} 0" in text
    assert 'pod="generator-1",container="generator"' in text

    export.restarted("target", exit_code=1)
    export.add("target", pgid=sleeper.pid)  # the relaunched process registers again
    text = render(exporter.containers)
    assert f"kube_pod_container_status_restarts_total{{{labels}}} 1" in text
    reason = f'kube_pod_container_status_last_terminated_reason{{{labels},reason="Error"}} 1'
    assert reason in text
    assert text.count("container_cpu_usage_seconds_total{") == 2  # replaced, not doubled

    export.remove_all()
    assert exporter.containers == []
