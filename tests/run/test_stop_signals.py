"""A stopped `plimsoll run` leaves nothing behind: SIGINT, SIGHUP and SIGTERM mid-trial
stop every process and remove every cgroup before the runner exits; after a SIGKILL
the children die with it (parent-death signal) and the next run reaps the rest (its
generator's worker processes, the target's cgroups). Real processes and cgroups."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from plimsoll.platforms.local import leftovers
from tests.localrun import (
    CLI,
    CPU_SPEC,
    ROOT,
    as_from_a_terminal,
    as_in_the_background,
    marked_processes,
)


def _spec(tmp_path: Path) -> Path:
    """The CPU-bound spec with two generator processes: workers the runner did not start
    itself, which only the run's mark can find after a SIGKILL."""
    document = yaml.safe_load(CPU_SPEC.read_text())
    document["spec"]["generators"] = {"replicas": 1, "processes": 2}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _wait_for(condition: object, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.2)
    raise AssertionError(what)


@pytest.mark.parametrize(
    ("signum", "started"),
    [
        (signal.SIGINT, as_from_a_terminal),
        (signal.SIGHUP, as_from_a_terminal),
        (signal.SIGTERM, as_from_a_terminal),
        (signal.SIGKILL, as_from_a_terminal),
        # `nohup plimsoll run ... &` from a script, or a CI job started so: SIGINT and
        # SIGHUP ignored. SIGTERM (kill, a cancelled job) must still stop the run: it did
        # nothing there when it was turned into a SIGINT for asyncio's Ctrl-C handling.
        (signal.SIGTERM, as_in_the_background),
    ],
    ids=["SIGINT", "SIGHUP", "SIGTERM", "SIGKILL", "SIGTERM-with-SIGINT-and-SIGHUP-ignored"],
)
def test_a_stopped_run_leaves_no_process_and_no_cgroup(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    signum: signal.Signals,
    started: Callable[[], None],
) -> None:
    mark = uuid.uuid4().hex
    state = tmp_path / "state"
    monkeypatch.setenv(leftovers.STATE_DIR_ENV, str(state))
    out = tmp_path / "out"
    env = {**os.environ, "PLIMSOLL_TEST_MARK": mark, leftovers.STATE_DIR_ENV: str(state)}
    command = ["run", str(_spec(tmp_path)), "--out", str(out), "--trial-duration", "3"]
    run = subprocess.Popen(
        [*CLI, *command, "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=started,
    )
    try:
        report = out / "report.json"
        _wait_for(
            lambda: report.exists() and json.loads(report.read_text())["steps"],
            90,
            "no step was recorded within 90 s",
        )
        time.sleep(1.0)  # the next trial is under way
        [record] = list((state / "plimsoll-runs").glob("*.json"))
        run_id = json.loads(record.read_text())["runId"]
        started = marked_processes(mark)
        assert len(started) >= 4, "target, mock, generator and its workers should run"
        assert leftovers.run_cgroups(run_id, None), "the target should be pinned in cgroups"
        run.send_signal(signum)
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    if signum == signal.SIGKILL:
        leftovers.reap_orphans()  # what the next `plimsoll run` does first
    else:
        assert run.returncode == 1, stderr.decode()
        assert not record.exists()  # a clean stop leaves nothing for the next run to reap
    _wait_for(lambda: marked_processes(mark) == [], 10, f"left running: {marked_processes(mark)}")
    assert leftovers.run_cgroups(run_id, None) == []
