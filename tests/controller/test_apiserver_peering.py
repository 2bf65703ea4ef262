"""Two operator replicas on the real API server: one active, the other standing by.

Both run the real `plimsoll operator --peering` as the chart's ServiceAccount and
join the release's ClusterKopfPeering, installed from the chart with kopf's
peering CRDs. The senior replica runs the test; the other stays paused and posts
nothing. SIGKILLed mid-run, the active one leaves its keep-alive to expire
(`--peering-lifetime`); the standby then takes over and resumes the run from its
status, with no step lost or run twice.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.metrics.conftest import free_port, start_prometheus

pytestmark = pytest.mark.slow

PEERING = "/apis/kopf.dev/v1/clusterkopfpeerings/plimsoll"  # release `plimsoll`'s
LIFETIME = 6  # seconds: the standby takes over this long after the last keep-alive


def _replica(name: str) -> dict[str, str]:
    # kopf names a replica in the peering object by POD_ID; Events carry POD_NAME.
    return {"POD_ID": name, "POD_NAME": name}


@pytest.fixture
def standby(apiserver: ApiServer, tmp_path: Path) -> Iterator[OperatorProcess]:
    logs = tmp_path / "standby-logs"
    logs.mkdir()
    installed = apiserver.installed
    process = OperatorProcess(
        installed.kubeconfigs["plimsoll"], logs, env=installed.envs["plimsoll"]
    )
    yield process
    process.kill()


async def _peers(apiserver: ApiServer, *names: str) -> dict[str, Any] | None:
    peers = ((await apiserver.api.get(PEERING)) or {}).get("status") or {}
    return peers if all(name in peers for name in names) else None


async def _steps(apiserver: ApiServer, name: str, at_least: int) -> list[dict[str, Any]] | None:
    steps = list((await apiserver.status(name)).get("steps", []))
    return steps if len(steps) >= at_least else None


async def test_one_replica_runs_the_test_and_the_standby_resumes_it_when_killed(
    apiserver: ApiServer,
    node_kubelet: RealKubelet,
    sa_operator: OperatorProcess,
    standby: OperatorProcess,
    tmp_path: Path,
) -> None:
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    peering = ("--peering=plimsoll", f"--peering-lifetime={LIFETIME}")
    try:
        sa_operator.start(*peering, prometheus=prometheus.url, env=_replica("replica-a"))
        await wait_for(lambda: _peers(apiserver, "replica-a"), 60, "replica-a's keep-alive")
        health = free_port()
        liveness = f"--liveness=http://127.0.0.1:{health}/healthz"
        standby.start(*peering, liveness, prometheus=prometheus.url, env=_replica("replica-b"))
        peers = await wait_for(lambda: _peers(apiserver, "replica-a", "replica-b"), 60, "both")
        await apiserver.apply(quickstart("duo", prometheus.url, levels=[20, 30, 40]))
        before = await wait_for(lambda: _steps(apiserver, "duo", 1), 90, "the first step")
        namespace = (await apiserver.status("duo"))["namespace"]
        # Paused, yet live and ready to the chart's probes: a rolling update can go on.
        async with httpx.AsyncClient(timeout=5) as http:
            paused_health = await http.get(f"http://127.0.0.1:{health}/healthz")
        killed_at = datetime.now()  # local time, as the operators' log lines
        sa_operator.kill()  # SIGKILL mid-run: no goodbye in the peering object
        # The killed replica's events, read once it is gone: read before the kill, an
        # event it posted in between counted as the standby's (CI: {'replica-a',
        # 'replica-b'}). The standby cannot resume sooner than a lifetime less one
        # keep-alive after the kill (kopf touches it every second at this lifetime, so
        # about 5 s); half a second lets a write already in flight land.
        await asyncio.sleep(0.5)
        events_before = await apiserver.events("duo")
        status = await wait_for(
            lambda: apiserver.phase_in("duo", "Succeeded", "Failed"), 120, "the resumed run"
        )
    finally:
        prometheus.stop()
    shown = json.dumps(status, indent=1)
    assert status["phase"] == "Succeeded", shown + sa_operator.log() + standby.log()
    assert status["namespace"] == namespace  # the same run, resumed, not a second one
    assert [s["level"] for s in status["steps"]] == [20, 30, 40], shown  # none lost, none twice
    assert status["steps"][0] == before[0]

    # The senior replica was active, the other paused: it announced nothing until the
    # active one's keep-alive ran out, then resumed the run and finished it.
    assert peers["replica-a"]["priority"] > peers["replica-b"]["priority"]
    assert paused_health.status_code == 200
    assert {e["reportingInstance"] for e in events_before} == {"replica-a"}
    events = await apiserver.events("duo")
    after = [e for e in events if e not in events_before]
    assert after, "the standby posted nothing"
    assert {e["reportingInstance"] for e in after} == {"replica-b"}
    # Levels 20, 30 and 40 all passed: an answer of "at least 40", not a ceiling (issue 51).
    assert [e["reason"] for e in after][-2:] == ["AtLeast", "Succeeded"]
    log = "\n".join(p.read_text() for p in sorted(standby.log_dir.glob("operator-*.log")))
    # It started paused (a named peering is mandatory) and resumed only after the kill.
    resumed = [line for line in log.splitlines() if "Resuming operations after the pause" in line]
    assert len(resumed) == 1, log[-3000:]
    resumed_at = datetime.strptime(resumed[0][:23], "%Y-%m-%d %H:%M:%S,%f")
    assert resumed_at > killed_at, (resumed_at, killed_at)
    # The figure the README quotes (seen with -s): about LIFETIME plus a keep-alive.
    print(f"standby resumed {(resumed_at - killed_at).total_seconds():.1f} s after the kill")
    assert forbidden(sa_operator) == []
    assert forbidden(standby) == []


async def test_a_stopped_replica_hands_over_at_once_without_waiting_for_its_lifetime(
    apiserver: ApiServer,
    node_kubelet: RealKubelet,
    sa_operator: OperatorProcess,
    standby: OperatorProcess,
    tmp_path: Path,
) -> None:
    """A rolling update: SIGTERM detaches the run and withdraws the keep-alive on the way
    out, so the standby resumes long before the (here, 5-minute) lifetime would run out."""
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    peering = ("--peering=plimsoll", "--peering-lifetime=300")
    try:
        sa_operator.start(*peering, prometheus=prometheus.url, env=_replica("old-pod"))
        await wait_for(lambda: _peers(apiserver, "old-pod"), 60, "old-pod's keep-alive")
        standby.start(*peering, prometheus=prometheus.url, env=_replica("new-pod"))
        await wait_for(lambda: _peers(apiserver, "old-pod", "new-pod"), 60, "both")
        await apiserver.apply(quickstart("roll", prometheus.url, levels=[20, 30]))
        await wait_for(lambda: _steps(apiserver, "roll", 1), 90, "the first step")
        stopped_at = datetime.now()  # SIGTERM, as Kubernetes stops the old pod
        assert await sa_operator.terminate() == 0, sa_operator.log()[-3000:]
        peers = await _peers(apiserver) or {}
        status = await wait_for(
            lambda: apiserver.phase_in("roll", "Succeeded", "Failed"), 120, "the handed-over run"
        )
    finally:
        prometheus.stop()
    shown = json.dumps(status, indent=1)
    assert status["phase"] == "Succeeded", shown + standby.log()
    assert [s["level"] for s in status["steps"]] == [20, 30], shown
    assert "old-pod" not in peers  # withdrawn on the way out, not left to expire
    log = "\n".join(p.read_text() for p in sorted(standby.log_dir.glob("operator-*.log")))
    resumed = [line for line in log.splitlines() if "Resuming operations after the pause" in line]
    assert len(resumed) == 1, log[-3000:]
    waited = (
        datetime.strptime(resumed[0][:23], "%Y-%m-%d %H:%M:%S,%f") - stopped_at
    ).total_seconds()
    assert 0 < waited < 150, waited  # under half the lifetime: it did not wait it out
    print(f"standby resumed {waited:.1f} s after the SIGTERM")  # the README's figure (-s)
    assert forbidden(sa_operator) == []
    assert forbidden(standby) == []


async def test_a_peering_object_that_is_not_there_stops_the_operator_saying_what_to_install(
    apiserver: ApiServer, sa_operator: OperatorProcess
) -> None:
    # kopf would wait, paused, for an object that never comes: no run, and not a word.
    sa_operator.start("--peering=nosuch")
    process = sa_operator.process
    assert process is not None
    code = await wait_for(lambda: _exited(process), 60, "the operator to exit")
    log = sa_operator.log()
    assert code == "1", log
    assert "--peering nosuch: ClusterKopfPeering nosuch not found" in log
    assert "peering.enabled=true" in log
    assert forbidden(sa_operator) == []


async def _exited(process: subprocess.Popen[bytes]) -> str | None:
    """Its exit code once it ended, as text so that `wait_for` takes a 0 too."""
    code = process.poll()
    return None if code is None else str(code)
