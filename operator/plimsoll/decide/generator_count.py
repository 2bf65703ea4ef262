"""How many generator processes the next step needs when `generators.replicas` is auto.

Called by `plimsoll.run.equipment` before every step of a sized run, with the
variant's step records so far. Pure: numbers in, a count and its reason out.

The rule:

- the generators' CPU per unit of load (cores per user, per request/s) is read
  from the steps measured so far, the most costly of them, so a level whose users
  cost more per head than the first step's is not sized on the first step's figure;
- the next level then needs `ceil(per_unit x level / (maxCpu / 2))` processes of
  one core each: half the saturation bound leaves room for the Poisson bursts, the
  host's noise and a level whose cost per unit rises;
- a step whose busiest generator went past `maxCpu` measured less CPU than the load
  needed (its generator was the limit), so the retry of that level gets at least
  one more than it had, whatever the figure says;
- never fewer than now (the run never scales down: a count that fell and rose again
  would make steps differ in more than their level), never more than
  `maxReplicas`; before any step is measured, the count stays as it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.generators import Generators
from plimsoll.api.step import StepRecord


@dataclass(frozen=True)
class GeneratorCount:
    """The processes the next step runs on, and why (for the report; empty: no change)."""

    count: int
    reason: str = ""


def cores_per_unit(records: Sequence[StepRecord]) -> float | None:
    """The most CPU the generators spent per unit of load in any measured step."""
    costs = [
        r.generator_cores / r.level
        for r in records
        if r.generator_cores is not None and r.generator_cores > 0 and r.level > 0
    ]
    return max(costs) if costs else None


def saturated(record: StepRecord, generators: Generators) -> bool:
    """The step's busiest generator process went past `maxCpu`."""
    return record.generator_peak_cpu is not None and record.generator_peak_cpu > generators.max_cpu


def generators_for(
    level: int, records: Sequence[StepRecord], current: int, generators: Generators
) -> GeneratorCount:
    """The generator processes for a step at `level`, given the steps measured so far
    (`records`, in order) and the `current` count."""
    per_unit = cores_per_unit(records)
    if per_unit is None:
        return GeneratorCount(current)
    budget = generators.max_cpu / 2
    needed = math.ceil(per_unit * level / budget - 1e-9)
    why = f"{per_unit * level:.2f} cores at level {level} over {budget:.0%} of a core each"
    same_level = [r for r in records if r.level == level]
    if same_level and saturated(same_level[-1], generators):
        last = same_level[-1]
        had = last.generators or current
        if needed <= had:
            needed = had + 1
            why = f"the last step at level {level} saturated its generators"
    wanted = max(current, needed)
    count = min(wanted, generators.max_replicas)
    if count == current:
        return GeneratorCount(current)
    capped = f" (capped at maxReplicas {generators.max_replicas})" if count < wanted else ""
    return GeneratorCount(count, f"{current} -> {count} generators: {why}{capped}")
