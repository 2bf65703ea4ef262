"""`kubectl plimsoll` (plimsoll.cli.kubectl) against the real API server.

Here rather than in tests/cli so it shares the session's control plane. Each
command logs in from the admin kubeconfig as kubectl would; the reports are real
report ConfigMaps the operator's own writer puts in the cluster, and the logs are
pods' logs as the API server serves them, fetched from a kubelet log endpoint
(`log_endpoint.py`) of a Node the pods are bound to.

Each command runs its own event loop (`asyncio.run`) and its own client, as it
does from a shell, so it is invoked on a worker thread (`asyncio.to_thread`): run
on the test's loop it would block it, and nested loops are refused.
"""

from __future__ import annotations

import asyncio
import copy
import shlex
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from typer.testing import CliRunner, Result

from plimsoll.api.gate import RegressionStatus
from plimsoll.api.status import CapacityTestStatus, Ceiling, Phase
from plimsoll.cli.kubectl import app
from plimsoll.controller.report_map import write_report_config_map
from plimsoll.decide.operator_action import RERUN_ANNOTATION
from plimsoll.kube import kubeconfig as kubeconfig_module
from plimsoll.kube import names
from plimsoll.kube.client import KubeClient
from plimsoll.kube.session import configuration
from tests.api.test_bad_input import BASE
from tests.browser import chromium_missing
from tests.controller.admin_api import ApiError
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.log_endpoint import LogNode
from tests.report.test_html_browser import assert_every_chart_drew, open_page
from tests.reportfixtures import CHANGE, Run, ladder, llm_proxy_report, make_report

pytestmark = pytest.mark.slow
runner = CliRunner()
WIDE = {"COLUMNS": "200"}  # rich wraps table cells at the default 80 columns


async def _test(apiserver: ApiServer, name: str) -> dict[str, Any]:
    body = copy.deepcopy(BASE)
    body["metadata"] = {"name": name}
    return await apiserver.apply(body)


def _client(apiserver: ApiServer) -> KubeClient:
    ca, cert, key = apiserver.plane.credentials()
    return KubeClient(
        configuration(
            apiserver.plane.server, ca_file=str(ca), cert_file=str(cert), key_file=str(key)
        )
    )


async def _invoke(apiserver: ApiServer, *args: str) -> Result:
    argv = [*args, "-n", apiserver.namespace, "--kubeconfig", str(apiserver.plane.kubeconfig)]
    return await asyncio.to_thread(runner.invoke, app, argv, env=WIDE)


async def _with_reports(apiserver: ApiServer) -> None:
    client = _client(apiserver)
    try:
        for name, run in (
            ("base", Run(400, 440, ladder(400, 440, 0.002), cpu_per_request_ms=2.0)),
            ("cand", Run(300, 330, ladder(300, 330, 0.0027), cpu_per_request_ms=2.7)),
        ):
            owner = await _test(apiserver, name)
            report = make_report({"default": run}, name)
            report.changepoints = [CHANGE] if name == "cand" else []
            await write_report_config_map(client, owner, report)
    finally:
        await client.aclose()


async def test_report_renders_the_markdown_and_saves_charts_on_request(
    apiserver: ApiServer, tmp_path: Path
) -> None:
    await _with_reports(apiserver)
    result = await _invoke(apiserver, "report", "base", "--charts", str(tmp_path / "charts"))
    assert result.exit_code == 0, result.output
    assert "Capacity report: base" in result.stdout
    assert "400 rps" in result.stdout  # the ceiling, from the ConfigMap's report.md
    assert "400 … 440" in result.stdout
    # rendered for the terminal, not raw Markdown: no heading marks, no table rules
    assert "# Capacity report" not in result.stdout
    assert "| --- |" not in result.stdout
    charts = sorted((tmp_path / "charts").iterdir())
    assert any(path.suffix == ".png" and path.stat().st_size > 0 for path in charts)
    for path in charts:
        assert f"chart: {path}" in result.stdout

    missing = await _invoke(apiserver, "report", "nothing")
    assert missing.exit_code == 1
    assert f"no report for {apiserver.namespace}/nothing yet" in missing.output


@pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))
async def test_report_html_from_the_stored_report_draws_every_chart_in_chromium(
    apiserver: ApiServer, tmp_path: Path
) -> None:
    client = _client(apiserver)
    try:
        owner = await _test(apiserver, "proxy")
        await write_report_config_map(client, owner, llm_proxy_report())
    finally:
        await client.aclose()
    page = tmp_path / "proxy.html"
    result = await _invoke(apiserver, "report", "proxy", "--html", str(page))
    assert result.exit_code == 0, result.output
    assert f"html: {page}" in result.stdout
    # The operator's ConfigMap kept this small report whole, histograms included: the bars'
    # charts are drawn from it as from a local run's report.json.
    visit = await asyncio.to_thread(open_page, page, tmp_path / "proxy.png")
    charts = [chart["id"] for chart in assert_every_chart_drew(visit)]
    assert charts[:4] == ["chart-bar-0", "chart-bar-1", "chart-operations", "chart-resources"]


async def test_compare_puts_two_tests_latest_reports_side_by_side(apiserver: ApiServer) -> None:
    await _with_reports(apiserver)
    result = await _invoke(apiserver, "compare", "base", "cand")
    assert result.exit_code == 0, result.output
    assert "cand holds 25% fewer" in result.stdout
    assert "-25.0%" in result.stdout
    assert "2.7 CPU-ms  +35.0%" in result.stdout  # the unit costs, from both report.json
    assert "Changepoints: cand" in result.stdout  # from cand's report.json, its history's
    assert "ceiling −25% ± 3% at run 1a2b3c4d (13 of 15), image api:2.7.0" in result.stdout

    one_missing = await _invoke(apiserver, "compare", "base", "absent")
    assert one_missing.exit_code == 1
    assert f"no report for {apiserver.namespace}/absent yet" in one_missing.output


async def test_rerun_sets_the_annotation_the_operator_watches(apiserver: ApiServer) -> None:
    await _test(apiserver, "again")
    result = await _invoke(apiserver, "rerun", "again")
    assert result.exit_code == 0, result.output
    found = await apiserver.get("again")
    assert found is not None
    token = found["metadata"]["annotations"][RERUN_ANNOTATION]
    assert token
    assert f"{RERUN_ANNOTATION}={token}" in result.stdout
    second = await _invoke(apiserver, "rerun", "again")
    assert second.exit_code == 0, second.output
    again = (await apiserver.get("again") or {})["metadata"]["annotations"][RERUN_ANNOTATION]
    assert again != token  # a new token each time: the operator sees a change
    assert again in second.stdout

    absent = await _invoke(apiserver, "rerun", "absent")
    assert absent.exit_code == 1
    assert '"absent" not found' in absent.output


@pytest.fixture
async def log_node(apiserver: ApiServer) -> AsyncIterator[LogNode]:
    served = LogNode(apiserver.api, apiserver.plane)
    await served.start()
    try:
        yield served
    finally:
        await served.stop()


async def _running_test(apiserver: ApiServer, log_node: LogNode, name: str) -> str:
    """A CapacityTest whose status names a run namespace holding a generator, a target
    and a mock pod on `log_node`, each with 100 lines of log; the namespace's name."""
    await _test(apiserver, name)
    run_namespace = f"{apiserver.namespace}-run"
    await apiserver.api.create("/api/v1/namespaces", {"metadata": {"name": run_namespace}})
    await apiserver.api.patch(
        f"{apiserver.path(name)}/status", {"status": {"namespace": run_namespace}}
    )
    for pod, role in (
        ("gen-0", names.ROLE_GENERATOR),
        ("gen-1", names.ROLE_GENERATOR),
        ("target", names.ROLE_TARGET),
        ("mock", names.ROLE_MOCK),
    ):
        body = log_node.pod(run_namespace, pod, {names.LABEL_ROLE: role})
        for _ in range(40):  # the namespace's default ServiceAccount comes within ~1 s
            try:
                await apiserver.api.create(f"/api/v1/namespaces/{run_namespace}/pods", body)
                break
            except ApiError as exc:  # 'serviceaccount "default" not found' until it comes
                if "serviceaccount" not in exc.message:
                    raise
                await asyncio.sleep(0.25)
        log_node.logs[(run_namespace, pod)] = [f"{pod} line {i}" for i in range(1, 101)]
    return run_namespace


async def test_logs_prints_the_generators_and_the_targets_last_lines(
    apiserver: ApiServer, log_node: LogNode
) -> None:
    run_namespace = await _running_test(apiserver, log_node, "busy")
    try:
        result = await _invoke(apiserver, "logs", "busy", "--tail", "3")
        assert result.exit_code == 0, result.output
        sections = result.stdout.split("==> ")[1:]
        assert [s.split(" <==")[0] for s in sections] == ["gen-0", "gen-1", "target"]
        for section in sections:
            pod = section.split(" <==")[0]
            lines = section.splitlines()[1:]
            assert lines == [f"{pod} line {i}" for i in (98, 99, 100)]
        assert "mock" not in result.stdout  # the mock's log is not the step's
        # the API server asked the node's kubelet for 3 lines of each pod it printed
        assert sorted(log_node.asked) == sorted(
            f"/containerLogs/{run_namespace}/{pod}/main?tailLines=3"
            for pod in ("gen-0", "gen-1", "target")
        )
    finally:
        # No kubelet confirms a graceful deletion on this node: the pods go at once.
        for pod in ("gen-0", "gen-1", "target", "mock"):
            path = f"/api/v1/namespaces/{run_namespace}/pods/{pod}"
            await apiserver.api.delete(path, gracePeriodSeconds="0")
        await apiserver.api.delete(f"/api/v1/namespaces/{run_namespace}")


async def test_logs_names_a_test_without_a_run_and_one_that_does_not_exist(
    apiserver: ApiServer,
) -> None:
    await _test(apiserver, "idle")
    idle = await _invoke(apiserver, "logs", "idle")
    assert idle.exit_code == 1
    assert f"{apiserver.namespace}/idle has no run namespace yet" in idle.output
    absent = await _invoke(apiserver, "logs", "absent")
    assert absent.exit_code == 1
    assert f"no CapacityTest {apiserver.namespace}/absent" in absent.output


async def _finished(apiserver: ApiServer, name: str, status: CapacityTestStatus) -> None:
    """A CapacityTest whose status says its current generation's run ended so."""
    created = await _test(apiserver, name)
    generation = created["metadata"]["generation"]
    body = status.model_copy(update={"observed_generation": generation}).to_wire()
    await apiserver.api.patch(f"{apiserver.path(name)}/status", {"status": body})


async def test_wait_exits_with_the_runs_answer(apiserver: ApiServer) -> None:
    """0 within the bar, 99 when the bar, the gate or the proof says no, 1 when the run
    failed or gave no answer in time, 2 for a test that is not there: `plimsoll run`'s."""
    ceiling = Ceiling(level=300, unit="users", low=300, high=400, complete=True)
    await _finished(apiserver, "held", CapacityTestStatus(phase=Phase.SUCCEEDED, ceiling=ceiling))
    result = await _invoke(apiserver, "wait", "held", "--timeout", "10s")
    assert result.exit_code == 0, result.output
    assert f"capacitytest {apiserver.namespace}/held: Succeeded" in result.stdout

    below = await _invoke(apiserver, "wait", "held", "--fail-below", "500")
    assert below.exit_code == 99, below.output
    assert "NO: ceiling default: ceiling 300 users, below the bar of 500 users" in below.stderr

    gate = [RegressionStatus(regressed=True, baseline=400, current=300, message="-25%")]
    await _finished(
        apiserver,
        "worse",
        CapacityTestStatus(phase=Phase.SUCCEEDED, ceiling=ceiling, regression=gate),
    )
    worse = await _invoke(apiserver, "wait", "worse")
    assert worse.exit_code == 99, worse.output
    assert "NO: ceiling default: -25%" in worse.stderr

    await _finished(
        apiserver, "broke", CapacityTestStatus(phase=Phase.FAILED, message="provisioning failed")
    )
    broke = await _invoke(apiserver, "wait", "broke")
    assert broke.exit_code == 1, broke.output

    # Edited since its run: that run's Succeeded is not the answer; none comes in time.
    await apiserver.api.patch(apiserver.path("held"), {"spec": {"trial": {"duration": "7s"}}})
    stale = await _invoke(apiserver, "wait", "held", "--timeout", "1s")
    assert stale.exit_code == 1, stale.output
    assert "no answer within the timeout" in stale.stderr

    absent = await _invoke(apiserver, "wait", "absent")
    assert absent.exit_code == 2, absent.output


ROLLOUTS_EXAMPLE = Path(__file__).parents[2] / "examples" / "argo-rollouts-analysis.yaml"


async def test_the_rollouts_analysis_job_runs_the_canary_and_exits_with_the_answer(
    apiserver: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 58, item 3: the example's AnalysisTemplate Job, its command as written, run
    as that Job runs it: logged in with its ServiceAccount's token (no kubeconfig in a
    pod), under the example's Role only. It sets the canary's image, which starts a new
    run, and exits 0 when that run answers above the bar, 99 below it: the analysis
    fails and the rollout aborts. (The operator's part is stood in for by its status.)"""
    test, account, role, binding, template = yaml.safe_load_all(ROLLOUTS_EXAMPLE.read_text())
    namespace = apiserver.namespace
    for document in (account, role, binding):
        apiserver.plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=yaml.safe_dump(document))
    await apiserver.apply(test)
    # What the kubelet mounts into the Job's pod: the token and the cluster's CA.
    mounted = tmp_path / "serviceaccount"
    mounted.mkdir()
    token = apiserver.plane.kubectl("create", "token", "plimsoll-gate", "-n", namespace)
    (mounted / "token").write_text(token.stdout.strip())
    (mounted / "ca.crt").write_bytes(apiserver.plane.credentials()[0].read_bytes())
    monkeypatch.setattr(kubeconfig_module, "SERVICE_ACCOUNT", mounted)
    server = urlsplit(apiserver.plane.server)
    pod_env = {
        "KUBERNETES_SERVICE_HOST": server.hostname,
        "KUBERNETES_SERVICE_PORT": str(server.port),
        "KUBECONFIG": None,
        "HOME": str(tmp_path),  # no ~/.kube/config there
    }
    [container] = template["spec"]["metrics"][0]["provider"]["job"]["spec"]["template"]["spec"][
        "containers"
    ]
    script = (
        container["command"][2]
        .replace("{{args.image}}", "registry.example.com/api:2.7.0")
        .replace("{{args.min-level}}", "400")
        .replace("$NAMESPACE", namespace)
    )
    rerun, wait = (shlex.split(part) for part in script.split("&&"))
    assert rerun[0] == wait[0] == "kubectl-plimsoll"

    async def job_step(argv: list[str]) -> Result:
        return await asyncio.to_thread(runner.invoke, app, argv[1:], env={**WIDE, **pod_env})

    async def the_operator_answers(level: int) -> dict[str, Any]:
        """The status the operator writes when the run asked for (this generation, this
        rerun token) ends with a ceiling at `level`."""
        found = await apiserver.get("api-gate") or {}
        meta = found["metadata"]
        status = CapacityTestStatus(
            phase=Phase.SUCCEEDED,
            ceiling=Ceiling(level=level, unit="rps", low=level, high=level * 2, complete=True),
            observed_generation=meta["generation"],
            rerun_token=meta["annotations"][RERUN_ANNOTATION],
        )
        path = f"{apiserver.path('api-gate')}/status"
        await apiserver.api.patch(path, {"status": status.to_wire()})
        return found

    started = await job_step(rerun)
    assert started.exit_code == 0, started.output
    changed = await the_operator_answers(450)
    assert changed["spec"]["target"]["image"] == "registry.example.com/api:2.7.0"
    assert changed["metadata"]["generation"] == 2  # a new spec: a new run
    held = await job_step(wait)
    assert held.exit_code == 0, held.output
    # The next analysis, the same image: the rerun annotation alone asks for a new run,
    # and the last answer (450) is not taken for it.
    again = await job_step(rerun)
    assert again.exit_code == 0, again.output
    await the_operator_answers(300)
    below = await job_step(wait)
    assert below.exit_code == 99, below.output
    assert "below the bar of 400" in below.stderr
    # The Job's Role reads and patches CapacityTests, nothing else.
    account_name = f"system:serviceaccount:{namespace}:plimsoll-gate"
    for verb, resource, allowed in [
        ("patch", "capacitytests.plimsoll.dev", "yes"),
        ("delete", "capacitytests.plimsoll.dev", "no"),
        ("get", "secrets", "no"),
        ("create", "pods", "no"),
    ]:
        asked = ["auth", "can-i", verb, resource, "-n", namespace, f"--as={account_name}"]
        answer = apiserver.plane.kubectl(*asked, check=False)
        assert answer.stdout.strip() == allowed, (verb, resource, answer.stdout, answer.stderr)
