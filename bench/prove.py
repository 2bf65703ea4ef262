"""Benchmark: prove a plan on this machine: three replicas at 70% of a measured ceiling, one killed.

Run: `.venv/bin/python bench/prove.py`. Two real local runs through `plimsoll run`
(processes, cgroups, loopback), both of `examples/targets/cpu_bound.py` (10 ms of
CPU per request, each replica pinned to 0.25 CPU: about 25 requests/s a replica):

1. the reference, measured in the same run: the ceiling of the deployment that
   must carry the load after the loss, two replicas, found by the doubling
   search (no faults);
2. the proof: three replicas in three zones at 70% of that ceiling
   (`search.strategy: prove`), one replica killed a third of the way in;
3. the same proof at 130% of that ceiling, which the two replicas left cannot
   carry: it must not hold (`held_over` false), or the verdict is wrong one way.

Figures: the reference ceiling, the proof's level and outcome, the p99 of the
windows before and during the fault (`steps[].faults[].windows`), the requests
that failed, the seconds until p99 was back within the bar, and what each
remaining replica carried. The last line is one JSON object:
{"replicas", "held_level", "p99_before_ms", "p99_during_ms", "failed_requests",
"recovery_s", "over_level", "held_over", ...}; `held_level` is the level when the
proof held, else null.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

# Run as a script (`python bench/NAME.py`): the repository root holds the `bench` package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cli_run import run_spec

SHARE = 0.7  # of the reference ceiling: the proof's level
OVER = 1.3  # of the reference ceiling: a proof that must not hold


def _target(replicas: int) -> dict[str, Any]:
    target: dict[str, Any] = {
        "command": [sys.executable, "examples/targets/cpu_bound.py"],
        "portEnv": "PORT",
        "env": {"WORK_MS": "10"},
        "resources": {"cpu": "0.25", "memory": "128Mi"},
        "replicas": replicas,
    }
    if replicas > 1:
        target["zones"] = ["a", "b", "c"][:replicas]
    return target


def _spec(name: str, replicas: int, trial: dict[str, Any], search: dict[str, Any]) -> Any:
    return {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": name},
        "spec": {
            "target": _target(replicas),
            "workload": {
                "model": "rate",
                "arrival": "uniform",
                "mix": [{"name": "work", "path": "/work"}],
                "timeout": "3s",
            },
            "trial": trial,
            "search": search,
            "passWhen": {
                "latency": [{"quantile": "p99", "below": "400ms"}],
                "minAchieved": "90%",
            },
            "generators": {"replicas": 1, "processes": 1},
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=24.0, help="The proof's trial, s.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plimsoll-prove-") as tmp:
        folder = Path(tmp)
        reference = run_spec(
            _spec(
                "prove-reference",
                2,
                {"duration": "4s", "warmUp": "1s"},
                {"strategy": "doubling", "start": 20, "precision": "10%", "repeats": 0},
            ),
            folder,
        )
        ceiling = reference["ceiling"]["level"]
        if ceiling is None:
            raise SystemExit("the reference found no ceiling: the host is too busy")
        level = max(1, int(ceiling * SHARE))
        over_level = int(ceiling * OVER) + 1
        kill_at = round(args.duration / 3, 1)
        proofs = [
            run_spec(
                _spec(
                    name,
                    3,
                    {
                        "duration": f"{args.duration:g}s",
                        "warmUp": "2s",
                        "slice": "500ms",
                        "faults": [{"at": f"{kill_at:g}s", "kill": {"replicas": 1}}],
                    },
                    {"strategy": "prove", "level": proof_level},
                ),
                folder,
            )
            for name, proof_level in (("prove-three", level), ("prove-over", over_level))
        ]
    proof_report, over_report = proofs
    over = over_report["proof"]
    proof = proof_report["proof"]
    [step] = proof_report["steps"]
    [outcome] = step["faults"]
    windows = {w["name"]: w for w in outcome["windows"]}
    remaining = {r["replica"]: round(r["rate"], 1) for r in proof["remaining"]}
    print(f"reference: 2 replicas' ceiling {ceiling} requests/s (analytic 50)")
    print(f"proof: {proof['sentence']}")
    print(f"level / reference ceiling: {level / ceiling:.2f}; per remaining replica: {remaining}")
    print(f"over the ceiling ({over_level / ceiling:.2f}): {over['sentence']}")
    figures = {
        "replicas": proof["replicas"],
        "held_level": level if proof["held"] else None,
        "p99_before_ms": windows["before"]["p99Ms"],
        "p99_during_ms": windows["during"]["p99Ms"],
        "failed_requests": proof["failedRequests"],
        "recovery_s": outcome["recoveryS"],
        "level": level,
        "reference_ceiling": ceiling,
        "held": proof["held"],
        "remaining_rps": remaining,
        "over_level": over_level,
        "held_over": over["held"],
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
