"""The admin's limits on runs, on the real API server and operator: queued runs start in
order and a held lock does not block the line; a run past `limits.deadline` ends Failed
with its steps kept and the reason in its one final write (issue 52).

Both wait more than they work (two 20 s trials hold the queue; a 40 s deadline), and
neither judges a figure measured on this host: they overlap with other tests, in a module
of their own so they pair with other such modules (`tests/conftest.py`: a module of mixed
kinds runs among the lone ones, where its waiting tests ran unpaired, 72 s of CI's time).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow


async def test_queued_runs_start_in_order_and_a_held_lock_does_not_block_the_line(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess
) -> None:
    sa_operator.start("--max-concurrent=2")
    # a and b share a lock; a runs long enough for b, c and d to queue behind it.
    bodies = {name: quickstart(name, None, levels=[20]) for name in "abcd"}
    for name in "ac":
        bodies[name]["spec"]["trial"]["duration"] = "20s"
    for name in "ab":
        bodies[name]["spec"]["target"]["lockKey"] = "shared-shop"
    await apiserver.apply(bodies["a"])
    await wait_for(lambda: apiserver.phase_in("a", "Provisioning", "Running"), 60, "a's run")
    for name in "bcd":
        await apiserver.apply(bodies[name])
    # c takes the second slot although b is ahead of it: b waits for its lock only.
    await wait_for(lambda: apiserver.phase_in("c", "Provisioning", "Running"), 60, "c's run")
    b = await wait_for(lambda: apiserver.phase_in("b", "Queued"), 30, "b Queued")
    assert b["queuePosition"] == 1, b
    assert f"'{apiserver.namespace}/shared-shop'" in b["message"], b  # the namespace's key
    # d may first be third, behind b and a c that had its slot but had not started yet;
    # once c runs, d's next poll moves it up.
    d = await wait_for(lambda: _at_position(apiserver, "d", 2), 30, "d second in the queue")
    assert "at most 2 at once" in d["message"], d
    progressing = next(c for c in d["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "Queued")
    # Without Prometheus every step is invalid; what matters is when each run started.
    done = {}
    for name in "abcd":
        done[name] = await wait_for(
            lambda name=name: apiserver.phase_in(name, "Succeeded", "Failed"), 180, name
        )
        assert "queuePosition" not in done[name], done[name]
    started = {name: await _provisioned_at(apiserver, name) for name in "abcd"}
    ended = {name: done[name]["completionTime"].replace("+00:00", "Z") for name in "abcd"}
    assert started["c"] < ended["a"]  # beside a: the lock held b back, not c
    assert started["b"] >= ended["a"]  # b only once a let go of the lock
    assert started["d"] >= min(ended["a"], ended["c"])  # d only once a slot was free
    assert forbidden(sa_operator) == []


async def _at_position(apiserver: ApiServer, name: str, position: int) -> Any:
    status = await apiserver.phase_in(name, "Queued")
    return status if status and status.get("queuePosition") == position else None


async def _provisioned_at(apiserver: ApiServer, name: str) -> str:
    reasons = [(e["reason"], e["eventTime"]) for e in await apiserver.events(name)]
    return next(time for reason, time in reasons if reason == "Provisioning")


async def test_a_run_past_the_admins_deadline_ends_failed_with_its_steps_kept(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    """Issue 52: nothing bounded how long a run held its pods. Past limits.deadline
    (wall time from its start) the run is stopped: Failed, the reason named, the steps
    it measured kept in its status."""
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        limits = '{"deadline": "40s"}'
        sa_operator.start(prometheus=prometheus.url, env={"PLIMSOLL_LIMITS": limits})
        # Light steps that all pass: the search would climb through 40 levels.
        body = quickstart("endless", prometheus.url, levels=list(range(1, 41)))
        await apiserver.apply(body)
        await wait_for(lambda: _has_steps(apiserver, "endless"), 60, "a first step")
        status = await wait_for(lambda: apiserver.phase_in("endless", "Failed"), 90, "Failed")
    finally:
        prometheus.stop()
    message = status["message"]
    assert "the run passed its deadline: 40s since it started" in message, json.dumps(status)
    assert "limits.deadline" in message
    assert status["steps"], status  # kept
    assert len(status["steps"]) < 40  # stopped before its search ended
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "RunFailed")
    assert "deadline" in ready["message"]


async def _has_steps(apiserver: ApiServer, name: str) -> Any:
    status = await apiserver.status(name)
    return status if status.get("steps") else None
