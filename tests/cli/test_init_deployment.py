"""`plimsoll init --deployment NS/NAME` on the real API server (issue 55): the Deployment
read with the user's kubeconfig, checked as the operator will copy it, its container's
limits written as the shape; the probe through a port-forward (here Debian's nginx on a
loopback port stands in for it). The spec it writes is accepted by the API server as
written (`kubectl apply --dry-run=server`); what cannot be copied is refused now, naming
it, with nothing written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.api.resource import load_capacity_test
from tests.cli.test_init import NGINX, running_nginx
from tests.controller.apiserver_fixtures import Installed
from tests.localrun import plimsoll

pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="Debian's nginx is not installed")


def _deployment(name: str, namespace: str, **pod: Any) -> dict[str, Any]:
    container = {
        "name": "app",
        "image": "registry.example.com/shop/api:1.4",
        "ports": [{"containerPort": 8080}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
        "resources": {"limits": {"cpu": "250m", "memory": "128Mi"}},
    }
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 0,  # read, never run: the operator copies it when a run starts
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [container], **pod},
            },
        },
    }


@pytest.fixture
def forwarded(tmp_path: Path) -> Iterator[str]:
    """Stands in for `kubectl port-forward`: a real HTTP server on a loopback port."""
    with running_nginx(tmp_path) as url:
        yield url


@pytest.fixture
def shop(control_plane_installed: Installed, tmp_path: Path) -> tuple[Installed, str]:
    plane = control_plane_installed.plane
    namespace = f"shop-{tmp_path.name[-8:].lower().replace('_', '-')}"
    plane.kubectl("create", "namespace", namespace)
    volumes = {"volumes": [{"name": "d", "hostPath": {"path": "/var/run"}}]}
    for body in (_deployment("api", namespace), _deployment("node-agent", namespace, **volumes)):
        plane.kubectl("apply", "-f", "-", stdin=json.dumps(body))
    return control_plane_installed, namespace


def test_init_from_a_deployment_writes_a_spec_the_api_server_accepts(
    shop: tuple[Installed, str],
    forwarded: str,
    tmp_path: Path,
) -> None:
    installed, namespace = shop
    spec = tmp_path / "capacitytest.yaml"
    done = plimsoll(
        "init", "--deployment", f"{namespace}/api", "--url", forwarded,
        "--kubeconfig", str(installed.plane.kubeconfig), "--out", str(spec),
        "--probe-seconds", "1", timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(now 250m CPU / 128Mi, the container's own)" in done.stdout
    assert f"Then: kubectl apply -f {spec}; kubectl get capacitytests -n {namespace}" in (
        done.stdout
    )
    document = yaml.safe_load(spec.read_text())
    assert document["metadata"]["namespace"] == namespace
    test = load_capacity_test(document)
    source = test.spec.target.from_deployment
    assert source is not None
    assert (source.name, source.container) == ("api", "app")
    assert test.spec.target.resources is not None
    assert (test.spec.target.resources.cpu, test.spec.target.resources.memory) == (0.25, 128 << 20)
    assert test.spec.search.start >= 1  # from the probe through the forward
    text = spec.read_text()
    assert text.startswith(f"# A CapacityTest written by `plimsoll init --deployment {namespace}")
    assert f"The probe went through {forwarded}" in text
    applied = installed.plane.kubectl("apply", "--dry-run=server", "-f", str(spec), check=False)
    assert applied.returncode == 0, applied.stderr


def test_what_cannot_be_copied_or_probed_is_refused_naming_it(
    shop: tuple[Installed, str],
    forwarded: str,
    tmp_path: Path,
) -> None:
    installed, namespace = shop
    spec = tmp_path / "x.yaml"
    config = ["--kubeconfig", str(installed.plane.kubeconfig), "--out", str(spec)]
    unprobed = plimsoll("init", "--deployment", f"{namespace}/api", *config)
    assert unprobed.returncode == 2
    assert f"kubectl port-forward -n {namespace} deployment/api 8080:PORT" in unprobed.stderr
    volumes = plimsoll(
        "init", "--deployment", f"{namespace}/node-agent", "--url", forwarded, *config
    )
    assert volumes.returncode == 2
    assert "container app: volumes are not copied" in volumes.stderr
    missing = plimsoll("init", "--deployment", f"{namespace}/nope", "--url", forwarded, *config)
    assert missing.returncode == 2
    assert f"no deployment 'nope' in namespace {namespace!r}" in missing.stderr
    bare = plimsoll("init", "--deployment", "api", "--url", forwarded, *config)
    assert bare.returncode == 2
    assert "give NAMESPACE/NAME" in bare.stderr
    assert not spec.exists()
