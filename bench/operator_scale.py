"""Twenty CapacityTests at once on one operator, on the real API server.

Starts the real control plane (`../shared/k8s/control-plane`), installs the chart's
CRD and RBAC, runs the test kubelet (`tests/controller/real_kubelet.py`: each pod a
real process in real cgroups, scraped by a real Prometheus) and one operator as the
chart's ServiceAccount with `--max-concurrent`. Then it applies `--tests`
CapacityTests together, each a two-level run of the operator tests' small target,
and waits until every one has ended. Unless `--no-kill`, the operator is killed
(SIGKILL, no goodbye) once half of them have ended, and started again: the runs it
was in the middle of must resume, and the queued ones must still start in order.

It measures:
- how many ended Succeeded with a ceiling, and whether each kept all its steps;
- the queue order: no test that waited Queued started before a test created
  earlier than it had started, give or take one poll (`queue_order_kept`);
- the operator's peak RSS and CPU (both processes, before and after the kill);
- the API requests per second the operator made, from the API server's own counts
  (`apiserver_flowcontrol_dispatched_requests_total`, flow schema
  `service-accounts`: the operator is the only ServiceAccount client here; the
  test kubelet and this bench are cluster admins, exempt, and the controller
  manager and scheduler have flow schemas of their own);
- status writes per step: the API server's count of non-GET requests to
  `capacitytests/status`, over the steps all tests recorded.
The reference measured in the same run is one CapacityTest alone on the same
operator: the wall time of twenty over five at once is compared with it.

Ends with one JSON line: {"tests", "succeeded", "operator_rss_mib",
"api_requests_per_s", "queue_order_kept", ...}.

Run: `.venv/bin/python bench/operator_scale.py` (root: the kubelet pins pods with
cgroups). About four minutes on this 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.controller import control_plane  # noqa: E402
from tests.controller.admin_api import AdminApi, wait_for  # noqa: E402
from tests.controller.apiserver_fixtures import ApiServer, install_chart  # noqa: E402
from tests.controller.conftest import OperatorProcess, forbidden, quickstart  # noqa: E402
from tests.controller.real_kubelet import RealKubelet  # noqa: E402
from tests.metrics.conftest import start_prometheus  # noqa: E402

LEVELS = [20, 40]
NAMESPACE = "scale"
ENDED = ("Succeeded", "Failed")
_SAMPLE = re.compile(r"^(?P<name>[a-z_]+)\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+-]+)$")


def _counter_sum(text: str, name: str, **labels: str) -> float:
    """The sum of a counter's samples whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        sample = _SAMPLE.match(line)
        if sample is None or sample["name"] != name:
            continue
        if all(f'{key}="{value}"' in sample["labels"] for key, value in labels.items()):
            total += float(sample["value"])
    return total


async def _api_counts(api: AdminApi) -> dict[str, float]:
    text = (await api.http.get("/metrics")).text
    writes = sum(
        _counter_sum(
            text, "apiserver_request_total", resource="capacitytests", subresource="status", verb=v
        )
        for v in ("PATCH", "APPLY", "PUT", "UPDATE")
    )
    operator = _counter_sum(
        text, "apiserver_flowcontrol_dispatched_requests_total", flow_schema="service-accounts"
    )
    return {"status_writes": writes, "operator_requests": operator}


class ProcessMeter:
    """Peak RSS and CPU seconds of the operator processes it was shown."""

    def __init__(self) -> None:
        self.cpu_s: dict[int, float] = {}
        self.rss_kib: dict[int, int] = {}

    def sample(self, pid: int) -> None:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return  # gone: its last sample stands
        ticks = os.sysconf("SC_CLK_TCK")
        self.cpu_s[pid] = (int(stat[11]) + int(stat[12])) / ticks  # utime + stime
        peak = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        if peak:
            self.rss_kib[pid] = int(peak[1])


async def _sample_while(meter: ProcessMeter, operator: OperatorProcess) -> None:
    while True:
        if operator.process is not None:
            meter.sample(operator.process.pid)
        await asyncio.sleep(0.5)


def _test(index: int, prometheus_url: str) -> dict[str, Any]:
    body = quickstart(f"t{index:02d}", prometheus_url, levels=LEVELS, duration="3s")
    body["spec"]["target"]["resources"] = {"cpu": "250m", "memory": "128Mi"}
    return body


async def _started_at(server: ApiServer, name: str) -> tuple[str, bool]:
    """When the test's first run was provisioned, and whether it waited Queued first."""
    reasons = [(e["reason"], e["eventTime"]) for e in await server.events(name)]
    queued = any(reason == "Queued" for reason, _ in reasons)
    return next(t for reason, t in reasons if reason == "Provisioning"), queued


# Waiting tests ask for a slot every half second (the supervisor's poll). When two
# slots free at once, the first two in the queue are both entitled, and the later one
# may ask first: its Provisioning event can precede the earlier one's by up to a poll.
POLL_S = 0.5


def queue_order_kept(started: list[tuple[str, bool]]) -> bool:
    """In creation order: a test that waited Queued started no earlier than every test
    created before it had started, give or take one poll."""
    at = [datetime.fromisoformat(stamp).timestamp() for stamp, _ in started]
    return all(
        not queued or all(earlier <= at[i] + POLL_S for earlier in at[:i])
        for i, (_, queued) in enumerate(started)
    )


async def _all_ended(server: ApiServer, names: list[str]) -> dict[str, Any] | None:
    statuses = {name: await server.status(name) for name in names}
    return statuses if all(s.get("phase") in ENDED for s in statuses.values()) else None


async def _ended_count(server: ApiServer, names: list[str]) -> int:
    return sum([(await server.status(n)).get("phase") in ENDED for n in names])


async def _one_alone(server: ApiServer, prometheus_url: str) -> float:
    """The reference: one test alone on the same operator, seconds from apply to end."""
    body = quickstart("alone", prometheus_url, levels=LEVELS, duration="3s")
    body["spec"]["target"]["resources"] = {"cpu": "250m", "memory": "128Mi"}
    started = time.monotonic()
    await server.apply(body)
    status = await wait_for(lambda: server.phase_in("alone", *ENDED), 300, "the lone test")
    if status["phase"] != "Succeeded":
        raise SystemExit(f"the reference run ended {status['phase']}: {status.get('message')}")
    return time.monotonic() - started


async def bench(tests: int, max_concurrent: int, kill: bool) -> dict[str, Any]:
    control_plane.require_control_plane()
    home = Path(tempfile.mkdtemp(prefix="operator-scale-"))
    plane = control_plane.start(home / "cluster")
    api = AdminApi(plane)
    try:
        installed = install_chart(plane, home)
        await api.create("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        server = ApiServer(installed, api, NAMESPACE)
        (home / "kubelet").mkdir()
        kubelet = RealKubelet(api, home / "kubelet")
        await kubelet.start()
        prometheus = await start_prometheus(home / "prom", [kubelet.exporter.address], "500ms")
        (home / "operator-logs").mkdir()
        operator = OperatorProcess(
            installed.kubeconfigs["plimsoll"],
            home / "operator-logs",
            env=installed.envs["plimsoll"],
        )
        meter = ProcessMeter()
        sampler = asyncio.get_running_loop().create_task(_sample_while(meter, operator))
        try:
            start_args = (f"--max-concurrent={max_concurrent}",)
            operator.start(*start_args, prometheus=prometheus.url)
            alone_s = await _one_alone(server, prometheus.url)
            names = [f"t{i:02d}" for i in range(tests)]
            before = await _api_counts(api)
            started = time.monotonic()
            for index in range(tests):
                await server.apply(_test(index, prometheus.url))
            killed = False
            if kill:
                await wait_for(
                    lambda: _half_ended(server, names, tests // 2), 900, "half of them ended"
                )
                operator.kill()
                operator.start(*start_args, prometheus=prometheus.url)
                killed = True
            statuses = await wait_for(lambda: _all_ended(server, names), 1200, "every test")
            wall_s = time.monotonic() - started
            after = await _api_counts(api)
        finally:
            sampler.cancel()
            operator.kill()
            prometheus.stop()
            await kubelet.stop()
        starts = [await _started_at(server, name) for name in names]
        succeeded = [
            n
            for n in names
            if statuses[n]["phase"] == "Succeeded" and statuses[n].get("ceiling") is not None
        ]
        complete = [
            n for n in names if [s["level"] for s in statuses[n].get("steps", [])] == LEVELS
        ]
        steps = sum(len(statuses[n].get("steps", [])) for n in names)
        requests = after["operator_requests"] - before["operator_requests"]
        writes = after["status_writes"] - before["status_writes"]
        refused = forbidden(operator)
        if not queue_order_kept(starts):
            for name, (at, queued) in zip(names, starts, strict=True):
                print(f"{name}: provisioned {at}{', after waiting Queued' if queued else ''}")
        for name in names:
            if name not in succeeded:
                print(f"{name}: {statuses[name].get('phase')}: {statuses[name].get('message')}")
        serial_s = alone_s * tests / max_concurrent
        return {
            "tests": tests,
            "succeeded": len(succeeded),
            "operator_rss_mib": round(max(meter.rss_kib.values(), default=0) / 1024, 1),
            "api_requests_per_s": round(requests / wall_s, 2),
            "queue_order_kept": queue_order_kept(starts),
            "max_concurrent": max_concurrent,
            "killed_halfway": killed,
            "all_steps_kept": len(complete),
            "operator_cpu_s": round(sum(meter.cpu_s.values()), 1),
            "operator_cores": round(sum(meter.cpu_s.values()) / wall_s, 3),
            "api_requests": int(requests),
            "status_writes": int(writes),
            "status_writes_per_step": round(writes / steps, 2) if steps else None,
            "status_writes_per_test": round(writes / tests, 1),
            "wall_s": round(wall_s, 1),
            "alone_s": round(alone_s, 1),
            "ratio_vs_alone_in_batches": round(wall_s / serial_s, 3),
            "refused_calls": len(refused),
        }
    finally:
        await api.aclose()
        control_plane.stop(plane)


async def _half_ended(server: ApiServer, names: list[str], half: int) -> bool:
    return await _ended_count(server, names) >= half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=20)
    parser.add_argument("--max-concurrent", type=int, default=5)
    parser.add_argument("--no-kill", action="store_true", help="do not kill the operator")
    args = parser.parse_args()
    result = asyncio.run(bench(args.tests, args.max_concurrent, not args.no_kill))
    for key, value in result.items():
        print(f"{key}: {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
