"""The path every user takes, on a real node: `helm install`, then `kubectl apply`.

The chart, rendered by the embedded Helm, is applied to a control plane of this
module's own, with the operator running as a pod from its image under the chart's
ServiceAccount, RBAC and PodSecurity `restricted`. The node (`node.py`) is a real
kubelet with containerd, a CNI bridge, kube-proxy and cluster DNS; the images are
imported into containerd from `scripts/build-images --save`. The cluster quickstart
(`examples/quickstart-cluster.yaml`, the example targets' image) is applied with kubectl
and must end
Succeeded with a ceiling and a limiting resource, its server-side figures read from
the kubelet's `/metrics/cadvisor` by a real Prometheus (no kube-state-metrics).

Two purposes, two suites. `make e2e` proves the path works: a short search (two
levels, one each side of the quickstart's memory limit) ends Succeeded with its
limit named. `make truth` proves the answer is the same as on one machine: the whole
search of the file as committed on the node, within the noise rule of `plimsoll run`
of the same file here. That local run comes first, before the control plane and the node exist,
so that their processes (kubelet, containerd, API server, Prometheus) do not share
the host with it; it needs a quiet host, which CI's is not.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from plimsoll.api.comparison import Band, Difference
from plimsoll.api.report import RunReport
from plimsoll.decide.difference import band_of, difference
from plimsoll.decide.step_summary import record_of
from tests.charts.helm import hooks, render
from tests.controller import control_plane
from tests.controller.control_plane import ControlPlane, require_control_plane
from tests.hostshare import alone_on_host
from tests.localrun import ROOT
from tests.realnode.images import build_all
from tests.realnode.node import NodeFacts, RealNode, missing_prerequisites

QUICKSTART = ROOT / "examples" / "quickstart-cluster.yaml"
RELEASE, OPERATOR_NS = "plimsoll", "plimsoll-system"
# Three of the kubelet's cAdvisor refreshes (~10 s each, 10.0-10.1 s measured here) and
# a margin: the interval is discovered from the samples' spacing.
TRIAL = "35s"
RESULTS = Path(os.environ.get("PLIMSOLL_REAL_NODE_RESULTS", "/tmp/plimsoll-real-node.json"))


@dataclass(frozen=True)
class LocalRun:
    """`plimsoll run` of the quickstart on this machine, the reference for the node's."""

    report: RunReport
    seconds: float


@dataclass
class Cluster:
    plane: ControlPlane
    node: RealNode
    facts: NodeFacts
    home: Path

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> Any:
        return self.plane.kubectl(*args, stdin=stdin, check=check)


def _require_node() -> None:
    require_control_plane()
    missing = missing_prerequisites()
    if missing:
        reason = "the real-node test needs " + ", ".join(missing)
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)


def _install_chart(cluster: Cluster) -> None:
    cluster.kubectl("apply", "-f", str(ROOT / "charts" / "plimsoll" / "crds"))
    cluster.plane.wait_established("capacitytests.plimsoll.dev")
    cluster.kubectl("create", "namespace", OPERATOR_NS)
    # The operator's own namespace is `restricted` too: its pod must pass as the run pods do.
    cluster.kubectl(
        "label", "namespace", OPERATOR_NS, "pod-security.kubernetes.io/enforce=restricted"
    )
    values = {"prometheus": {"url": cluster.facts.prometheus_url}}
    rendered = render(values, name=RELEASE)
    # As `helm install` does: the release's objects, not `helm test`'s hooks.
    manifests = "\n---\n".join(
        t for p, t in sorted(rendered.items()) if not p.endswith(".txt") and "/tests/" not in p
    )
    cluster.kubectl("apply", "-n", OPERATOR_NS, "-f", "-", stdin=manifests)
    cluster.kubectl(
        "rollout", "status", f"deployment/{RELEASE}", "-n", OPERATOR_NS, "--timeout=180s"
    )
    _wait_for_spacing(cluster.facts.prometheus_url)


def _wait_for_spacing(url: str) -> None:
    """Until cAdvisor's samples show their spacing (four of the node's own cgroup): a
    Prometheus just started has too few, and the interval would be its global 1 s. A
    cluster's Prometheus has hours of them."""
    query = 'count_over_time(container_cpu_usage_seconds_total{id="/"}[10m])'
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answer = httpx.get(f"{url}/api/v1/query", params={"query": query}, timeout=5).json()
        result = answer["data"]["result"]
        if result and float(result[0]["value"][1]) >= 4:
            return
        time.sleep(2)
    raise AssertionError(f"Prometheus at {url} has no four cAdvisor samples after 120 s")


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory: pytest.TempPathFactory) -> LocalRun:
    """`plimsoll run` of the quickstart, for `make truth` only. Asked for before
    `cluster`, so it runs with nothing of the cluster there yet: beside its kubelet,
    containerd, API server and Prometheus a CI run's local half ended inconclusive
    twice (level 325 noisy 4 times in a row, each time)."""
    home = tmp_path_factory.mktemp("real-node-local")
    with alone_on_host(tmp_path_factory):
        return _run_locally(home, QUICKSTART)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    _require_node()
    home = tmp_path_factory.mktemp("real-node")
    # Alone: the image builds and the node's start take both cores, and a test on the
    # other worker that judges a ceiling (make e2e runs two at once) would measure a busy
    # host. CI saw it: a shapes test found 54 where 62 is analytic beside this set-up.
    with alone_on_host(tmp_path_factory):
        archives = build_all(tmp_path_factory)
        # A control plane of its own: a real Node must not take the pods other modules'
        # test kubelets are waiting for, and default/kubernetes gets an endpoint here.
        plane = control_plane.start(home / "plane")
    node = RealNode(plane.folder, plane.kubeconfig, home / "node")
    try:
        with alone_on_host(tmp_path_factory):
            facts = node.up(archives)
            found = Cluster(plane, node, facts, home)
            _install_chart(found)
        yield found
    finally:
        logs = plane.kubectl(
            "logs", f"deployment/{RELEASE}", "-n", OPERATOR_NS, "--tail=200", check=False
        )
        (home / "operator.log").write_text(logs.stdout + logs.stderr)
        plane.kubectl("delete", "capacitytests", "--all", "-A", "--timeout=120s", check=False)
        node.down()
        control_plane.stop(plane)


def _quickstart(name: str, duration: str) -> dict[str, Any]:
    """The cluster quickstart under another name, with trials of `duration`."""
    test: dict[str, Any] = yaml.safe_load(QUICKSTART.read_text())
    test["metadata"] = {"name": name, "namespace": "default"}
    test["spec"]["trial"]["duration"] = duration
    return test


def _wait_done(cluster: Cluster, name: str, seconds: float) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        found = cluster.kubectl("get", "capacitytest", name, "-n", "default", "-o", "json")
        status = json.loads(found.stdout).get("status", {})
        if status.get("phase") in ("Succeeded", "Failed"):
            return status
        time.sleep(3)
    raise AssertionError(f"{name} did not finish in {seconds:g} s: {status}")


def _report(cluster: Cluster, name: str) -> RunReport:
    found = cluster.kubectl("get", "configmap", f"{name}-report", "-n", "default", "-o", "json")
    return RunReport.model_validate_json(json.loads(found.stdout)["data"]["report.json"])


def test_helm_test_says_this_clusters_network_plugin_does_not_enforce_network_policy(
    cluster: Cluster,
) -> None:
    """`helm test` (issue 52, item 5): the node's CNI bridge ignores NetworkPolicy, so the
    chart's probe reaches the port its policy denies and fails saying so. Its hooks
    are applied in Helm's order (weight), as `helm test` applies them."""
    items = hooks({"prometheus": {"url": cluster.facts.prometheus_url}}, name=RELEASE)
    try:
        for item in items:
            cluster.kubectl("apply", "-n", OPERATOR_NS, "-f", "-", stdin=yaml.safe_dump(item))
        probe = f"{RELEASE}-netpol-probe"
        deadline = time.monotonic() + 120
        phase = ""
        while time.monotonic() < deadline and phase not in ("Succeeded", "Failed"):
            time.sleep(2)
            found = cluster.kubectl("get", "pod", probe, "-n", OPERATOR_NS, "-o", "json")
            phase = json.loads(found.stdout).get("status", {}).get("phase", "")
        log = cluster.kubectl("logs", probe, "-n", OPERATOR_NS).stdout
    finally:
        # Gone before the next test, as Helm removes them: the listener's pod would take the
        # CPU the node has left for a run's generator (CI saw the next run fail so).
        for item in reversed(items):
            cluster.kubectl(
                "delete", item["kind"].lower(), item["metadata"]["name"], "-n", OPERATOR_NS,
                "--cascade=foreground", "--wait=true", "--timeout=90s", check=False,
            )  # fmt: skip
    assert phase == "Failed", (phase, log)
    assert "NetworkPolicy is NOT enforced on this cluster" in log, log


def test_a_trial_too_short_for_cadvisor_is_refused_before_provisioning(cluster: Cluster) -> None:
    test = _quickstart("too-short", "15s")  # the local quickstart's trials
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(test))
    status = _wait_done(cluster, "too-short", 180)
    assert status["phase"] == "Failed", status
    assert re.search(
        r"Fix: trial\.duration ≥ 3\d(\.\d)? s at a 1\d(\.\d)? s scrape", status["message"]
    )
    assert not status.get("steps"), "refused before any trial"
    pods = cluster.kubectl("get", "pods", "-A", "-l", "app.kubernetes.io/managed-by=plimsoll")
    assert "No resources found" in pods.stderr or not pods.stdout.strip()
    cluster.kubectl("delete", "capacitytest", "too-short", "-n", "default", "--timeout=120s")


def _apply_and_wait(cluster: Cluster, test: dict[str, Any] | Path) -> tuple[dict[str, Any], float]:
    """Apply `test` (a file as committed, into `default` as kubectl's context puts it, or a
    changed copy) and wait for its end."""
    started = time.monotonic()
    if isinstance(test, Path):
        name = yaml.safe_load(test.read_text())["metadata"]["name"]
        cluster.kubectl("apply", "-n", "default", "-f", str(test))
    else:
        name = test["metadata"]["name"]
        cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(test))
    status = _wait_done(cluster, name, 1800)
    seconds = time.monotonic() - started
    (cluster.home / f"{name}-status.json").write_text(json.dumps(status, indent=2))
    report_map = cluster.kubectl("get", "configmap", f"{name}-report", "-o", "json", check=False)
    (cluster.home / f"{name}-report.json").write_text(report_map.stdout)
    assert status["phase"] == "Succeeded", json.dumps(status.get("steps"))[-3000:]
    return status, seconds


def _server_side_figures_hold(cluster: Cluster, name: str, status: dict[str, Any]) -> RunReport:
    """The report's ceiling is the status's, and every passing step carries the target's
    figures from the kubelet's cAdvisor through Prometheus, restarts from pod status."""
    report = _report(cluster, name)
    assert report.ceiling is not None
    assert report.ceiling.level == status["ceiling"]["level"]
    # (A step the target died in is a failure with its CPU unread: cut by the restart.)
    steps = [s for s in report.steps if s.target is not None and s.judgement.verdict == "pass"]
    assert steps, "no passing step carries the target's server-side figures"
    for step in steps:
        target = step.target
        assert target is not None
        assert target.source == "prometheus", target
        assert target.missing == [], target
        assert target.cpu_mean_cores is not None
        assert target.memory_max_bytes is not None
        assert target.cpu_limit_cores == pytest.approx(0.5)
    # Every run pod was admitted under PodSecurity `restricted` (the run namespace's).
    run_ns = cluster.kubectl("get", "namespace", status["namespace"], "-o", "json", check=False)
    if run_ns.returncode == 0:
        labels = json.loads(run_ns.stdout)["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    return report


def test_a_short_search_on_a_real_node_names_its_limit(cluster: Cluster) -> None:
    """Two levels either side of the quickstart's ceiling (300 users at 96 MiB, where
    each held stream keeps 256 KiB): 150 passes, 450 runs the gateway out of memory."""
    test = _quickstart("short-search", TRIAL)
    test["spec"]["search"] = {"strategy": "steps", "levels": [150, 450]}
    status, _ = _apply_and_wait(cluster, test)
    print(cluster.kubectl("get", "capacitytests", "-n", "default").stdout)
    assert status["ceiling"]["level"] == 150, status["ceiling"]
    assert status["ceiling"]["limitedBy"] == "memory", status["ceiling"]
    report = _server_side_figures_hold(cluster, "short-search", status)
    verdicts = {s.level: s.judgement.verdict for s in report.steps}
    assert verdicts == {150: "pass", 450: "fail"}, verdicts
    cluster.kubectl("delete", "capacitytest", "short-search", "-n", "default", "--timeout=120s")


def test_the_quickstart_on_a_real_node_finds_the_local_ceiling(
    local_reference: LocalRun, cluster: Cluster, record_property: Any
) -> None:
    """`make truth`: the whole quickstart search on the node agrees with `plimsoll run`
    of the same spec on this machine, by the noise rule."""
    status, cluster_seconds = _apply_and_wait(cluster, QUICKSTART)  # exactly as committed
    table = cluster.kubectl("get", "capacitytests", "-n", "default").stdout
    print(table)
    ceiling = status["ceiling"]
    assert ceiling["level"] > 0, status
    assert ceiling["limitedBy"] in ("cpu", "memory", "neither"), status
    report = _server_side_figures_hold(cluster, "quickstart", status)
    local = local_reference.report
    assert local.ceiling is not None
    assert not local.ceiling.inconclusive, ("busy twice", local.ceiling)
    assert local.ceiling.level is not None
    verdict = difference(_band(local), _band(report))
    figures = {
        "cluster_ceiling": ceiling["level"],
        "cluster_limited_by": ceiling["limitedBy"],
        "cluster_seconds": round(cluster_seconds),
        "local_ceiling": local.ceiling.level,
        "local_limited_by": str(local.ceiling.limited_by),
        "local_seconds": round(local_reference.seconds),
        "difference": str(verdict),
    }
    for key, value in figures.items():
        record_property(key, value)
    RESULTS.write_text(json.dumps({"kubectl_get_capacitytests": table, **figures}, indent=2))
    assert verdict is Difference.WITHIN_NOISE, (ceiling, local.ceiling)


def _band(report: RunReport) -> Band | None:
    assert report.ceiling is not None
    return band_of(report.ceiling, [record_of(step) for step in report.steps])


def _run_locally(folder: Path, test: Path) -> LocalRun:
    """`plimsoll run` of the spec; once more if the tool itself called the host too busy.

    A CI run's VM lost 3-46% of its CPU to its hypervisor in one such run, which then
    ended inconclusive (a level noisy at every repeat). That is the tool's honest answer,
    not a ceiling to compare; a user reruns, and so does this test, once. Any other
    failure fails.
    """
    started = time.monotonic()
    report = _one_local_run(folder / "first", test)
    if report.ceiling is not None and report.ceiling.inconclusive:
        print("local run inconclusive (host busy), run again:", report.ceiling.stop_reason)
        report = _one_local_run(folder / "again", test)
    return LocalRun(report, time.monotonic() - started)


def _one_local_run(folder: Path, spec: Path) -> RunReport:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", "from plimsoll.cli.app import main; main()", "run", str(spec),
         "--out", str(folder / "out")],
        cwd=ROOT, check=False, timeout=1800, capture_output=True, text=True,
    )  # fmt: skip
    found = folder / "out" / "report.json"
    assert found.exists(), (done.returncode, done.stderr[-2000:])
    report = RunReport.model_validate_json(found.read_text())
    inconclusive = report.ceiling is not None and report.ceiling.inconclusive
    assert done.returncode == 0 or inconclusive, (done.returncode, done.stderr[-2000:])
    return report
