"""Benchmark: the seeds' doubling search against the probe search on simulated noisy targets.

Runs a few hundred targets with known ceilings (bench/simulated_targets.py),
each searched by `doubling` and by `probe` under the same noise, and prints for
each: the share of runs whose ceiling is within `precision` of the truth, the
median number of trials and the total trial time, with probe's figures as a
ratio of doubling's measured in the same run. No clock is involved: trial time
is the sum of the simulated trials' durations. The last line is one JSON object.

    .venv/bin/python bench/search.py [--targets 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics

from simulated_targets import Run, SimTarget, run

from plimsoll.api.spec import Search, Strategy, Trial

# The noise a shared host adds, stated so the figures can be judged.
NOISE = {
    "stall": 0.1,  # a trial is noisy (the floor caught a stall) and is repeated
    "false_fail": 0.003,  # a passing trial fails anyway: a stall the floor missed
    "jitter": 0.01,  # sd of the bar at full length; x sqrt(5) for a fifth-length probe
    "probe_bias": 0.03,  # short trials see up to 3% more capacity than full-length ones
}
WIGGLE = (0.0, 0.01)  # half the targets have a slightly non-monotone curve
TRIAL = Trial(duration=60.0)
SEARCH = Search(start=100, precision=0.1, repeats=2, max_trials=40)
RETRIES = 3


def within(target: SimTarget, result: Run, precision: float) -> bool:
    level = result.finished.ceiling.level
    if level is None:
        return False
    return bool(target.truth_low * (1 - precision) <= level <= target.truth_high * (1 + precision))


def above_truth(target: SimTarget, result: Run) -> bool:
    level = result.finished.ceiling.level
    return level is not None and level > target.truth_high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    targets = [
        SimTarget(
            capacity=round(math.exp(rng.uniform(math.log(30), math.log(100_000)))),
            wiggle=WIGGLE[index % len(WIGGLE)],
            seed=rng.randrange(2**32),
            **NOISE,
        )
        for index in range(args.targets)
    ]
    precision = SEARCH.precision
    figures: dict[str, dict[str, float]] = {}
    for strategy in (Strategy.DOUBLING, Strategy.PROBE):
        search = SEARCH.model_copy(update={"strategy": strategy})
        runs = [(t, run(search, TRIAL, t, retries=RETRIES)) for t in targets]
        figures[strategy.value] = {
            "within": sum(within(t, r, precision) for t, r in runs) / len(runs),
            "above": sum(above_truth(t, r) for t, r in runs) / len(runs),
            "complete": sum(r.finished.ceiling.complete for _, r in runs) / len(runs),
            "trials": statistics.median(len(r.history) for _, r in runs),
            "trial_s": sum(r.trial_seconds for _, r in runs),
            "full_trials": statistics.median(
                sum(s.kind == "full" for s in r.history) for _, r in runs
            ),
        }

    print(f"{len(targets)} simulated targets, ceilings 30..100000, noise {NOISE}, wiggle {WIGGLE}")
    print(f"search {SEARCH.to_wire()}, noise retries {RETRIES}, trial {TRIAL.duration:g}s")
    header = ("within", ">truth", "complete", "trials", "full", "trial time")
    print(f"{'':10} " + " ".join(f"{h:>8}" for h in header))
    for name, fig in figures.items():
        print(
            f"{name:10} {fig['within']:8.1%} {fig['above']:8.1%} {fig['complete']:8.1%} "
            f"{fig['trials']:8g} {fig['full_trials']:8g} {fig['trial_s'] / 3600:8.1f} h"
        )
    doubling, fast = figures["doubling"], figures["probe"]
    print(f"probe / doubling trial time: {fast['trial_s'] / doubling['trial_s']:.1%}")
    print(
        json.dumps(
            {
                "doubling_within": round(doubling["within"], 4),
                "fast_within": round(fast["within"], 4),
                "doubling_trial_s": round(doubling["trial_s"], 1),
                "fast_trial_s": round(fast["trial_s"], 1),
                "doubling_trials": doubling["trials"],
                "fast_trials": fast["trials"],
            }
        )
    )


if __name__ == "__main__":
    main()
