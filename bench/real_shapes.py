"""The real shape targets and their analytic capacity: the e2e test and `shapes.py --real`.

Two example targets whose capacity per pod shape follows from their settings:
`examples/targets/parallel_cpu.py` (WORK_MS of CPU per request on THREADS
parallel workers: C cores carry C / WORK_MS requests per second) and
`examples/targets/memory_hold.py` (HOLD_MIB held for HOLD_SECONDS per request:
a limit of L carries (L - idle) / (HOLD_MIB × HOLD_SECONDS)). Their specs, one
per target with three shapes each, are in tests/e2e/specs/. `run_spec` runs one
with `plimsoll run` in a process of its own (the CLI as a user runs it) and
returns its report.json; `judge` holds each measured ceiling against the
analytic capacity and the cheapest shape found against the analytically
cheapest. tests/e2e/test_shapes_real.py and `bench/shapes.py --real` share this,
so the analytic figures are derived once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import PodShape
from plimsoll.cli.spec_file import read_capacity_tests

ROOT = Path(__file__).resolve().parents[1]
SPECS = {
    "cpu-bound": ROOT / "tests" / "e2e" / "specs" / "shapes-cpu-bound.yaml",
    "memory-bound": ROOT / "tests" / "e2e" / "specs" / "shapes-memory-bound.yaml",
}
MIB = 2**20
# memory_hold.py's own working set with nothing held, as its memory cgroup counts it
# (measured here: 15 MiB at 10 requests/s once the 80 MiB held is taken off).
IDLE_BYTES = 16 * MIB
WITHIN = 0.10  # the bar: each ceiling within 10% of the analytic capacity
CLI = [sys.executable, "-c", "from plimsoll.cli.app import main; main()"]


def spec_of(name: str) -> CapacityTestSpec:
    return read_capacity_tests(SPECS[name])[0].spec


def analytic_capacity(spec: CapacityTestSpec, shape: PodShape) -> float:
    """Requests per second the spec's target carries at `shape`, from its settings alone."""
    command = " ".join(spec.target.command or [])
    env = spec.target.env
    if "parallel_cpu.py" in command:
        cores = min(shape.cpu, float(env.get("THREADS", "4")))
        return cores / (float(env.get("WORK_MS", "40")) / 1000)
    if "memory_hold.py" in command:
        held = float(env.get("HOLD_MIB", "4")) * MIB * float(env.get("HOLD_SECONDS", "2"))
        return (shape.memory - IDLE_BYTES) / held
    raise ValueError(f"no analytic capacity for the target {command!r}")


@dataclass(frozen=True)
class ShapeCheck:
    """One measured shape beside its analytic capacity."""

    name: str
    label: str
    shape: PodShape
    analytic: float
    found: int | None
    limited_by: str
    cost_per_thousand: float | None

    @property
    def error(self) -> float | None:
        return None if self.found is None else self.found / self.analytic - 1

    @property
    def within(self) -> bool:
        return self.error is not None and abs(self.error) <= WITHIN


@dataclass(frozen=True)
class Judged:
    """A real run's shapes against the analytic answer."""

    rows: list[ShapeCheck]
    cheapest_found: str | None
    cheapest_analytic: str
    trials: int

    @property
    def cheapest_correct(self) -> bool:
        return self.cheapest_found == self.cheapest_analytic


def judge(spec: CapacityTestSpec, report: dict[str, Any]) -> Judged:
    """Each shape of the run's report against its analytic capacity; the cheapest shape
    found against the cheapest at the analytic capacities and the spec's prices."""
    rows = []
    for row in report["shapes"]["rows"]:
        shape = PodShape.model_validate({"cpu": row["cpu"], "memory": row["memory"]})
        rows.append(
            ShapeCheck(
                name=row["name"],
                label=row["label"],
                shape=shape,
                analytic=analytic_capacity(spec, shape),
                found=row.get("ceiling"),
                limited_by=row["limitedBy"],
                cost_per_thousand=row.get("costPerThousand"),
            )
        )
    cheapest = min(rows, key=lambda r: spec.cost.per_hour(r.shape) / r.analytic)
    return Judged(
        rows=rows,
        cheapest_found=report["shapes"].get("cheapest"),
        cheapest_analytic=cheapest.name,
        trials=len(report["steps"]),
    )


def run_spec(spec_file: Path, out: Path, timeout: float = 600) -> dict[str, Any]:
    """`plimsoll run spec_file --out out --quiet`; its report.json, also when the run was
    incomplete (exit 1: a shape without a ceiling is judged as such). Raises with the
    CLI's stderr when it wrote no report."""
    done = subprocess.run(
        [*CLI, "run", str(spec_file), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )
    saved = out / "report.json"
    if done.returncode not in (0, 1, 99) or not saved.exists():  # 99: no level passed
        raise RuntimeError(
            f"plimsoll run {spec_file.name} exited {done.returncode}: {done.stderr[-3000:]}"
        )
    report: dict[str, Any] = json.loads(saved.read_text())
    return report
