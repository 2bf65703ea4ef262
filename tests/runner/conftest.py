"""Shared by the runner, report and e2e tests: a short CPU-bound spec, and a scan for
processes left behind (marked through an environment variable every child inherits)."""

from __future__ import annotations

import os
from pathlib import Path

from plimsoll.api.resource import CapacityTest
from plimsoll.specfile import read_capacity_tests

ROOT = Path(__file__).resolve().parents[2]
CPU_SPEC = ROOT / "tests" / "e2e" / "specs" / "cpu-bound.yaml"


def short_cpu_test(duration: float = 1.5, warm_up: float = 0.5) -> CapacityTest:
    test = read_capacity_tests(CPU_SPEC)[0]
    spec = test.spec.model_copy(
        update={
            "trial": test.spec.trial.model_copy(update={"duration": duration, "warm_up": warm_up})
        }
    )
    return test.model_copy(update={"spec": spec})


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
