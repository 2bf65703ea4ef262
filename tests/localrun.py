"""Shared by the tests that run Plimsoll for real on this machine (runner, platforms,
report, e2e): short specs, the CLI in a process of its own and the report it saved, and
a progress sink that records, and a scan for processes left behind.

Every process a run starts inherits PLIMSOLL_TEST_MARK from the test (the `mark`
fixture in tests/conftest.py sets it), so `marked_processes` finds whatever a run
left behind, and only that run's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from plimsoll.api.report import RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import Ceiling, CurrentStep, Phase
from plimsoll.api.step import StepRecord, StepResult
from plimsoll.cli.spec_file import read_capacity_tests

ROOT = Path(__file__).resolve().parents[1]
CPU_SPEC = ROOT / "tests" / "e2e" / "specs" / "cpu-bound.yaml"
# The CLI's entry point as a user's shell runs it, whichever python runs the tests.
CLI = [sys.executable, "-c", "from plimsoll.cli.app import main; main()"]


class RecordingSink:
    """A `ProgressSink` that keeps everything it is told, for the test to look at."""

    def __init__(self) -> None:
        self.phases: list[Phase] = []
        self.records: list[StepRecord] = []
        self.report: RunReport | None = None
        self.on_step_started: list[CurrentStep] = []
        self.variants: list[tuple[str, Ceiling | None]] = []  # (name, None) when it started
        self.replaced: list[str] = []

    async def phase(self, phase: Phase, message: str) -> None:
        self.phases.append(phase)

    async def variant_started(self, name: str) -> None:
        self.variants.append((name, None))

    async def variant_finished(self, ceiling: Ceiling) -> None:
        self.variants.append((ceiling.variant, ceiling))

    async def step_started(self, step: CurrentStep) -> None:
        self.on_step_started.append(step)

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        self.records.append(record)

    async def equipment_replaced(self, message: str) -> None:
        self.replaced.append(message)

    async def finished(self, report: RunReport) -> None:
        self.report = report


def short_cpu_test(
    duration: float = 1.5, warm_up: float = 0.5, *, confirm: bool = False
) -> CapacityTest:
    """The cpu-bound spec with short trials; `confirm` (off unless the test is about it)
    runs the confirmation trials after the search."""
    test = read_capacity_tests(CPU_SPEC)[0]
    spec = test.spec.model_copy(
        update={
            "trial": test.spec.trial.model_copy(update={"duration": duration, "warm_up": warm_up}),
            "attribution": test.spec.attribution.model_copy(update={"confirm": confirm}),
        }
    )
    return test.model_copy(update={"spec": spec})


def one_level_test(name: str, target: dict[str, Any], level: int = 10, **spec: Any) -> CapacityTest:
    """A 1.5 s trial at one `level` of uniform GET /work, passing at 90% achieved; `spec`
    adds or replaces top-level spec fields (passWhen, generators, services, variants)."""
    return CapacityTest.model_validate(
        {
            "metadata": {"name": name},
            "spec": {
                "target": target,
                "workload": {
                    "model": "rate",
                    "arrival": "uniform",
                    "mix": [{"name": "work", "path": "/work"}],
                },
                "trial": {"duration": "1.5s", "warmUp": "0.3s"},
                "search": {"strategy": "steps", "levels": [level], "repeats": 0},
                "passWhen": {"minAchieved": "90%"},
                # Mechanics, on a shared machine: busy-host failures stay fails here.
                "noise": {"repeatWhenBusy": False},
                # Nor about which resource binds: no confirmation trials.
                "attribution": {"confirm": False},
                **spec,
            },
        }
    )


def plimsoll(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, as a user runs it (its event loop is its own)."""
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def saved_report(out: Path) -> dict[str, Any]:
    """The report.json a run wrote to `out`, as JSON (what a user's tools read)."""
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report


def as_from_a_terminal() -> None:
    """`preexec_fn` for the CLI under test: SIGINT and SIGHUP as a terminal's shell leaves
    them (default), whatever this test process inherited (a CI job started in the
    background with `nohup` ignores both, and its children would too)."""
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def as_in_the_background() -> None:
    """`preexec_fn` for the CLI under test: started as `nohup plimsoll run ... &` from a
    script, with SIGINT and SIGHUP ignored."""
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)


def marked_processes(mark: str) -> list[int]:
    """Pids of live processes whose environment carries PLIMSOLL_TEST_MARK=mark."""
    needle = f"PLIMSOLL_TEST_MARK={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found
