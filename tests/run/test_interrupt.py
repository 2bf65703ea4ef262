"""Ctrl-C during `plimsoll run`: every process stops, the partial report keeps the steps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

from tests.localrun import CLI, CPU_SPEC, ROOT, as_from_a_terminal, marked_processes, saved_report


def test_sigint_stops_everything_and_keeps_the_steps(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    out = tmp_path / "out"
    env = {**os.environ, "PLIMSOLL_TEST_MARK": mark}
    command = ["run", str(CPU_SPEC), "--out", str(out), "--trial-duration", "1.5", "--quiet"]
    run = subprocess.Popen(
        [*CLI, *command],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=as_from_a_terminal,  # Ctrl-C's SIGINT, whatever pytest inherited
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            report = out / "report.json"
            if report.exists() and json.loads(report.read_text())["steps"]:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("no step was recorded within 60 s")
        assert marked_processes(mark), "the target, mock and generator should be running"
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, stderr.decode()
    saved = saved_report(out)
    assert len(saved["steps"]) >= 1
    assert saved["outcome"] == "failed"
    assert "interrupted" in saved["message"]
    assert marked_processes(mark) == []
