"""`kubectl plimsoll` (plimsoll.cli.kubectl) against the real API server.

Here rather than in tests/cli so it shares the session's control plane. Each
command logs in from the admin kubeconfig as kubectl would; the reports are real
report ConfigMaps the operator's own writer puts in the cluster, and the logs are
a pod's log as the API server serves it (written by the test kubelet).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plimsoll.cli.kubectl import app
from plimsoll.controller.report_map import write_report_config_map
from plimsoll.decide.plan import RERUN_ANNOTATION
from plimsoll.kube.client import KubeClient
from plimsoll.kube.session import configuration
from tests.api.test_bad_input import BASE
from tests.controller.apiserver_fixtures import ApiServer
from tests.reportfixtures import Run, ladder, make_report

pytestmark = pytest.mark.slow
runner = CliRunner()


async def _test(apiserver: ApiServer, name: str) -> dict[str, Any]:
    body = copy.deepcopy(BASE)
    body["metadata"] = {"name": name}
    return await apiserver.apply(body)


async def _client(apiserver: ApiServer) -> KubeClient:
    ca, cert, key = apiserver.plane.credentials()
    return KubeClient(
        configuration(
            apiserver.plane.server, ca_file=str(ca), cert_file=str(cert), key_file=str(key)
        )
    )


def _invoke(apiserver: ApiServer, *args: str) -> Any:
    return runner.invoke(
        app, [*args, "-n", apiserver.namespace, "--kubeconfig", str(apiserver.plane.kubeconfig)]
    )


async def _with_reports(apiserver: ApiServer) -> None:
    client = await _client(apiserver)
    try:
        for name, run in (
            ("base", Run(400, 440, ladder(400, 440, 0.002), cpu_per_request_ms=2.0)),
            ("cand", Run(300, 330, ladder(300, 330, 0.0027), cpu_per_request_ms=2.7)),
        ):
            owner = await _test(apiserver, name)
            await write_report_config_map(client, owner, make_report({"default": run}, name))
    finally:
        await client.aclose()


async def test_report_renders_the_markdown_and_saves_charts_on_request(
    apiserver: ApiServer, tmp_path: Path
) -> None:
    await _with_reports(apiserver)
    result = _invoke(apiserver, "report", "base", "--charts", str(tmp_path / "charts"))
    assert result.exit_code == 0, result.output
    assert "400" in result.stdout
    assert "**" not in result.stdout  # rendered for the terminal, not raw Markdown
    charts = sorted(p.name for p in (tmp_path / "charts").iterdir())
    assert any(name.endswith(".png") for name in charts)
    assert "chart: " in result.stdout

    missing = _invoke(apiserver, "report", "nothing")
    assert missing.exit_code == 1
    assert "no report for" in missing.output


async def test_compare_puts_two_tests_latest_reports_side_by_side(apiserver: ApiServer) -> None:
    await _with_reports(apiserver)
    result = _invoke(apiserver, "compare", "base", "cand")
    assert result.exit_code == 0, result.output
    assert "cand holds 25% fewer" in result.stdout
    assert "-25.0%" in result.stdout


async def test_rerun_sets_the_annotation_the_operator_watches(apiserver: ApiServer) -> None:
    await _test(apiserver, "again")
    result = _invoke(apiserver, "rerun", "again")
    assert result.exit_code == 0, result.output
    found = await apiserver.get("again")
    assert found is not None
    token = found["metadata"]["annotations"][RERUN_ANNOTATION]
    assert token
    assert token in result.stdout
    second = _invoke(apiserver, "rerun", "again")
    assert (await apiserver.get("again") or {})["metadata"]["annotations"][
        RERUN_ANNOTATION
    ] != token
    assert second.exit_code == 0


async def test_logs_names_a_test_without_a_run_and_one_that_does_not_exist(
    apiserver: ApiServer,
) -> None:
    await _test(apiserver, "idle")
    idle = _invoke(apiserver, "logs", "idle")
    assert idle.exit_code == 1
    assert "has no run namespace yet" in idle.output
    absent = _invoke(apiserver, "logs", "absent")
    assert absent.exit_code == 1
    assert f"no CapacityTest {apiserver.namespace}/absent" in absent.output
