"""Against a real API server (kind, k3d, any cluster): what kmock cannot show.

Runs only when PLIMSOLL_E2E_KUBECONFIG names a kubeconfig; it installs the CRD,
runs `plimsoll operator` against that cluster, and checks the API server's own
behaviour: schema rejection messages, the status subresource, printer columns,
and the run namespace's deletion. The images plimsoll-generator and
plimsoll-mock must be loadable by the cluster (see the README: kind load /
k3d image import). Without the variable these tests are skipped: no cluster
is reachable from this machine, and kmock covers the operator's logic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.api.crd import render_crd

KUBECONFIG = os.environ.get("PLIMSOLL_E2E_KUBECONFIG")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not KUBECONFIG, reason="needs a real cluster: set PLIMSOLL_E2E_KUBECONFIG (kind or k3d)"
    ),
]
# A Prometheus the operator can reach that scrapes cAdvisor (e.g. kube-prometheus-stack).
PROMETHEUS = os.environ.get("PLIMSOLL_E2E_PROMETHEUS_URL")
EXAMPLE = Path(__file__).with_name("e2e-capacitytest.yaml")


def kubectl(
    *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": KUBECONFIG or ""}
    return subprocess.run(
        ["kubectl", *args], input=stdin, env=env, text=True, capture_output=True, check=check
    )


def get_ct(name: str) -> dict[str, Any]:
    return dict(json.loads(kubectl("get", "capacitytest", name, "-o", "json").stdout))


@pytest.fixture(scope="module")
def installed() -> Any:
    kubectl("apply", "-f", "-", stdin=render_crd())
    kubectl(
        "wait", "--for=condition=Established", "crd/capacitytests.plimsoll.dev", "--timeout=60s"
    )
    env = {**os.environ, "KUBECONFIG": KUBECONFIG or ""}
    operator = subprocess.Popen(
        [sys.executable, "-c", "from plimsoll.cli.app import main; main()", "operator", "-A"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    yield
    operator.terminate()
    operator.wait(timeout=60)


def test_schema_rejects_a_bad_duration_with_the_field_named(installed: Any) -> None:
    bad = yaml.safe_load(EXAMPLE.read_text())
    bad["metadata"]["name"] = "e2e-bad"
    bad["spec"]["trial"]["duration"] = "soon"
    result = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(bad), check=False)
    assert result.returncode != 0
    assert "spec.trial.duration" in result.stderr


def test_example_runs_with_status_subresource_printer_columns_and_cleanup(installed: Any) -> None:
    example = yaml.safe_load(EXAMPLE.read_text())
    if PROMETHEUS:
        example["spec"]["metrics"] = {"prometheusUrl": PROMETHEUS}
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(example))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        status = get_ct("e2e-quick").get("status", {})
        if status.get("phase") in ("Succeeded", "Failed"):
            break
        time.sleep(5)
    if PROMETHEUS:
        assert status["phase"] == "Succeeded", status
    else:  # without server metrics every step is invalid, and the status says why
        assert status["phase"] == "Failed", status
        assert "Prometheus" in json.dumps(status["steps"])
    # The status subresource: a spec patch through the main resource cannot touch it.
    kubectl(
        "patch", "capacitytest", "e2e-quick", "--type=merge", "-p", '{"status":{"phase":"Pending"}}'
    )
    assert get_ct("e2e-quick")["status"]["phase"] == status["phase"]
    columns = kubectl("get", "capacitytest", "e2e-quick").stdout.splitlines()[0].split()
    assert columns[:7] == ["NAME", "PHASE", "CEILING", "UNIT", "LIMITED-BY", "CHANGE", "STEPS"]
    namespace = status["namespace"]
    kubectl("delete", "capacitytest", "e2e-quick", "--timeout=120s")
    gone = kubectl("get", "namespace", namespace, check=False)
    assert gone.returncode != 0 or "Terminating" in gone.stdout
