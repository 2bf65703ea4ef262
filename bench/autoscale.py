"""Benchmark: an autoscaler flight on this machine, its recommended HPA, and that HPA's proof.

Run: `.venv/bin/python bench/autoscale.py`. Two real local runs through `plimsoll run`
(processes, cgroups, loopback) of `examples/targets/cpu_bound.py` (10 ms of CPU per
request, each replica pinned to 0.25 CPU: about 25 requests/s a replica):

1. the reference, measured in the same run: one replica's ceiling, found by the
   doubling search; it is the flight's `autoscale.perPod`;
2. the flight: a base of half that ceiling for 30 s, a step to 1.8 times it (two
   replicas' worth) held 60 s, and a 15 s ramp back down held 15 s, at an HPA from one
   replica at 60% CPU with the controller's default 15 s sync; the run recommends the
   HPA that absorbs the step and flies the profile again under it
   (`autoscale: {recommend: true, prove: true}`).

Figures: the first new replica's lag and the lag the recommendation planned for (two
syncs and the slowest start), time to capacity, seconds over the bar, the failed share,
whether each flight held, and the recommended settings. The last line is one JSON
object: {"lag_s", "time_to_capacity_s", "seconds_over_bar", "failed_pct", "held",
"recommended_target_utilization", "held_with_recommendation", ...}.
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

BASE_SHARE = 0.5  # of the reference ceiling: the flight's base
PEAK_SHARE = 1.8  # of the reference ceiling: the step (two replicas' worth, nearly)
BAR = {"latency": [{"quantile": "p99", "below": "400ms"}], "minAchieved": "90%"}


def _target() -> dict[str, Any]:
    return {
        "command": [sys.executable, "examples/targets/cpu_bound.py"],
        "portEnv": "PORT",
        "env": {"WORK_MS": "10"},
        "resources": {"cpu": "0.25", "memory": "128Mi"},
    }


def _spec(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    workload = {
        "model": "rate",
        "arrival": "uniform",
        "mix": [{"name": "work", "path": "/work"}],
        "timeout": "5s",
    }
    return {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": name},
        "spec": {
            "target": _target(),
            "workload": workload,
            "passWhen": BAR,
            "generators": {"replicas": 1, "processes": 1},
            **spec,
        },
    }


def _flight(report: dict[str, Any], variant: str) -> dict[str, Any]:
    flights = [s["flight"] for s in report["steps"] if s["variant"] == variant and s.get("flight")]
    if not flights:
        raise SystemExit(f"no flight of {variant} in the report: {report.get('message')}")
    flight: dict[str, Any] = flights[-1]
    return flight


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sync", type=float, default=15.0, help="The HPA's sync period, s.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plimsoll-autoscale-") as tmp:
        folder = Path(tmp)
        reference = run_spec(
            _spec(
                "autoscale-reference",
                {
                    "trial": {"duration": "4s", "warmUp": "1s"},
                    "search": {
                        "strategy": "doubling",
                        "start": 10,
                        "precision": "10%",
                        "repeats": 0,
                    },
                },
            ),
            folder,
            timeout=900,
        )
        per_pod = reference["ceiling"]["level"]
        if per_pod is None:
            raise SystemExit("the reference found no ceiling: the host is too busy")
        base, peak = round(per_pod * BASE_SHARE), round(per_pod * PEAK_SHARE)
        target = _target()
        target["autoscaler"] = {
            "minReplicas": 1,
            "maxReplicas": 6,
            "targetCpuUtilization": 60,
            "syncPeriod": f"{args.sync:g}s",
        }
        flown = run_spec(
            _spec(
                "autoscale-flight",
                {
                    "target": target,
                    "workload": {
                        "model": "rate",
                        "arrival": "uniform",
                        "mix": [{"name": "work", "path": "/work"}],
                        "timeout": "5s",
                        "profile": [
                            {"level": base, "hold": "30s"},
                            {"level": peak, "hold": "60s"},
                            {"level": base, "ramp": "15s", "hold": "15s"},
                        ],
                    },
                    "trial": {"duration": "1s", "slice": "1s"},
                    "search": {"strategy": "autoscale"},
                    "autoscale": {
                        "perPod": per_pod,
                        "maxFailed": "1%",
                        "recommend": True,
                        "prove": True,
                    },
                },
            ),
            folder,
            timeout=900,
        )
    flight = _flight(flown, "default")
    advice = flight.get("recommendation")
    proof = _flight(flown, "default-recommended") if advice is not None else None
    lag = flight["lags"][0]["lagS"] if flight["lags"] else None
    failed_pct = 100 * flight["failed"] / flight["sent"] if flight["sent"] else 0.0
    print(f"reference: one replica's ceiling {per_pod} requests/s (analytic 25)")
    print(f"flight: {flight['sentence']}")
    if advice is None:
        print(f"no recommendation: {flight.get('noRecommendation')}")
    else:
        settings = advice["autoscaler"]
        print(
            f"recommended: {settings['minReplicas']}-{settings['maxReplicas']} replicas at "
            f"{settings['targetCpuUtilization']}% CPU; planned lag {advice['lagS']} s "
            f"(measured first lag {lag} s, ratio {lag / advice['lagS']:.2f})"
            if lag is not None
            else f"recommended: {settings}"
        )
    if proof is not None:
        print(f"under it: {proof['sentence']}")
    figures = {
        "lag_s": lag,
        "time_to_capacity_s": flight["timeToCapacityS"],
        "seconds_over_bar": flight["secondsOverBar"],
        "failed_pct": round(failed_pct, 3),
        "held": flight["held"],
        "recommended_target_utilization": advice["autoscaler"]["targetCpuUtilization"]
        if advice
        else None,
        "held_with_recommendation": proof["held"] if proof is not None else None,
        "per_pod": per_pod,
        "pod_start_s": flight["podStartS"],
        "planned_lag_s": advice["lagS"] if advice else None,
        "recommended_min_replicas": advice["autoscaler"]["minReplicas"] if advice else None,
        "seconds_over_bar_with_recommendation": proof["secondsOverBar"] if proof else None,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
