"""Ctrl-C during `plimsoll run`: every process stops, the partial report keeps the steps."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.runner.conftest import CPU_SPEC, ROOT, marked_processes


def test_sigint_stops_everything_and_keeps_the_steps(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    out = tmp_path / "out"
    env = {**os.environ, "PLIMSOLL_TEST_MARK": mark}
    command = [
        sys.executable,
        "-m",
        "plimsoll.cli",
        "run",
        str(CPU_SPEC),
        "--out",
        str(out),
        "--trial-duration",
        "1.5",
        "--quiet",
    ]
    run = subprocess.Popen(
        [sys.executable, "-c", "from plimsoll.cli import main; main()", *command[3:]],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
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
    saved = json.loads((out / "report.json").read_text())
    assert len(saved["steps"]) >= 1
    assert saved["outcome"] == "failed"
    assert "interrupted" in saved["message"]
    assert marked_processes(mark) == []
