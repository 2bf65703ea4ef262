"""A real history for the gate's changepoint method: releases of a target measured on
this machine, one of them 15% dearer per request.

    python bench/changepoint_history.py        # about 7 minutes on 2 cores

`examples/targets/cpu_bound.py` pinned to QUOTA cores stands for a service whose
releases are measured one run each, as `trigger.onImageChange` would: RELEASES runs
with WORK_MS of CPU per request (release "1.0"), then CHANGED runs with CHANGED_MS
("1.1", 15% more work per request, so about 13% less capacity). Each run is a whole
default search (`plimsoll.run.runner.run_test` on the local platform, as `plimsoll
run` does); its ceiling and the target's CPU per request (the slope over its passing
steps, `plimsoll.decide.unit_costs`) join the history, and the gate judges the latest run
against it exactly as the operator does after each run (`decide.regression.remember`,
`decide.changepoint_gate.judge_changepoints`, defaults: significance 0.01, 200
permutations).

Prints each run's figures and verdict, then one JSON line: runs, regressed_runs (the
runs the gate called Regressed), false_regressions (Regressed before the change),
and for each series (ceiling, cpu) the run where its first change was found, that
change's run (the first run of "1.1" when right), its change in percent and p.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for folder in ("operator", "generator-image", ""):
    sys.path.insert(0, str(ROOT / folder))

from bench.truth import run  # noqa: E402
from plimsoll.api.gate import HistoryEntry, Regression, RegressionMethod  # noqa: E402
from plimsoll.api.resource import CapacityTest  # noqa: E402
from plimsoll.decide.changepoint_gate import judge_changepoints  # noqa: E402
from plimsoll.decide.regression import entry_of, remember  # noqa: E402
from plimsoll.decide.unit_costs import slopes  # noqa: E402

QUOTA = 0.5
WORK_MS = 10.0
CHANGED_MS = 11.5
RELEASES = 8  # runs of "1.0"
CHANGED = 4  # runs of "1.1" after them
POLICY = Regression(method=RegressionMethod.CHANGEPOINT)


def release_test(work_ms: float) -> CapacityTest:
    return CapacityTest.model_validate(
        {
            "metadata": {"name": "history"},
            "spec": {
                "target": {
                    "command": ["python", "examples/targets/cpu_bound.py"],
                    "portEnv": "PORT",
                    "env": {"WORK_MS": f"{work_ms:g}"},
                    "resources": {"cpu": f"{QUOTA:g}", "memory": "128Mi"},
                },
                "upstream": {"routes": [{"name": "unused", "path": "/unused"}]},
                "workload": {"mix": [{"name": "work", "path": "/work"}]},
                "trial": {"duration": "4s", "warmUp": "1s"},
                "search": {
                    "strategy": "doubling",
                    "start": 24,
                    "floor": 2,
                    "limit": 200,
                    "precision": "5%",
                    "repeats": 0,
                    "maxTrials": 12,
                },
                "passWhen": {"latency": [{"quantile": "p99", "below": "1s"}]},
                "attribution": {"confirm": False},  # the history is about the ceiling
                "generators": {"replicas": 1, "processes": 1},
            },
        }
    )


def first_change(history: list[dict[str, Any]], metric: str) -> dict[str, Any] | None:
    """The first verdict that names a change of `metric`, and that change."""
    for row in history:
        for point in row["changepoints"]:
            if point["metric"] == metric:
                return {"found_at": row["run"], **point}
    return None


async def main() -> dict[str, Any]:
    out = Path(tempfile.mkdtemp(prefix="plimsoll-history-"))
    start = datetime(2026, 12, 7, tzinfo=UTC)
    history: list[HistoryEntry] = []
    rows: list[dict[str, Any]] = []
    releases = [("1.0", WORK_MS)] * RELEASES + [("1.1", CHANGED_MS)] * CHANGED
    for index, (image, work_ms) in enumerate(releases):
        report = await run(release_test(work_ms), f"run-{index}", out)
        ceiling = report.ceilings[0] if report.ceilings else report.ceiling
        run_id = f"r{index:02d}"
        if ceiling is None or not ceiling.complete:
            print(f"run {index} ({image}): no complete ceiling, not remembered", flush=True)
            continue
        costs = slopes(report.steps)
        entry = entry_of(
            ceiling, run_id, start + timedelta(days=index), image=f"shop:{image}", costs=costs
        )
        history = remember(history, [entry], 50)
        reported = {(p.metric, p.run_id) for row in rows for p in row["points"]}
        verdict = judge_changepoints(history, "default", run_id, POLICY, reported)
        cpu_ms = costs.cpu_cores * 1000 if costs.cpu_cores is not None else None
        print(
            f"run {index} (shop:{image}, {work_ms:g} ms a request): ceiling {ceiling.level} rps, "
            f"CPU per request {'-' if cpu_ms is None else f'{cpu_ms:.2f} ms'}; "
            f"{'REGRESSED ' if verdict.regressed else ''}{verdict.message}",
            flush=True,
        )
        rows.append(
            {
                "run": index,
                "image": image,
                "regressed": verdict.regressed,
                "points": verdict.changepoints,
                "changepoints": [p.model_dump(by_alias=True) for p in verdict.changepoints],
            }
        )
    figures: dict[str, Any] = {
        "runs": len(rows),
        "regressed_runs": [r["run"] for r in rows if r["regressed"]],
        "false_regressions": sum(r["regressed"] and r["run"] < RELEASES for r in rows),
    }
    for key, metric in (("ceiling", "ceiling"), ("cpu", "CPU per unit")):
        found = first_change(rows, metric)
        figures[f"{key}_change_found_at_run"] = found["found_at"] if found else None
        figures[f"{key}_change_run"] = int(found["runId"][1:]) if found else None
        figures[f"{key}_change_pct"] = round(found["change"] * 100, 1) if found else None
        figures[f"{key}_change_p"] = found["pvalue"] if found else None
    return figures


if __name__ == "__main__":
    os.chdir(ROOT)  # the spec names its command relative to the repository
    print(json.dumps(asyncio.run(main())))
