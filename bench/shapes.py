"""Benchmark: the guided shape search against independent searches of the same shapes.

Two simulated targets whose capacity per shape is known analytically (usage =
fixed + per-unit × level for CPU and for memory, each usable to a share of its
limit): one CPU-bound, one memory-bound. For each, the guided search
(`plimsoll.decide.shape_search`) chooses shapes from what limited the ones
before; every shape's ceiling is found by the real trial search
(`plimsoll.decide.search`) driven against a `SimTarget` of that capacity, the
guided shapes starting where the prediction says. The same shapes searched
independently (each from `search.start`, doubling) are the reference, measured
in the same run. The cheapest shape found is checked against the cheapest shape
of the whole grid, computed analytically. No clock is involved. The last line
is one JSON object.

`--real` measures instead the real targets of `bench/real_shapes.py` (a CPU-bound
and a memory-bound example, three explicit shapes each, pinned by cgroups through
`plimsoll run`): every ceiling against its analytic capacity, and the cheapest
shape found against the analytically cheapest. Those runs search each shape
independently (from `search.start`), so `trials_independent` is measured and
`trials_guided` is null. About six minutes; run it under `quietrun`.

`--real-guided` runs the guided search on the same real targets (`REAL_GRIDS`: a
grid this two-core machine can grant, at most one CPU), then searches the very
shapes it measured independently, each from `search.start`, at the same
precision: both trial counts are measured, on real processes. About ten minutes.

    .venv/bin/python bench/shapes.py [--noise | --real | --real-guided]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from real_shapes import SPECS, Judged, judge, run_spec, spec_of
from simulated_targets import SimTarget, run

from plimsoll.api.shapes import Cost, CpuRange, MemoryRange, ShapeSearch, shape_label
from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import LimitedBy
from plimsoll.api.target import PodShape
from plimsoll.decide.shape_search import (
    MeasuredShape,
    NextShape,
    cost_per_unit,
    grid,
    next_shape,
    predicted_search,
)

MIB = 2**20
TRIAL = Trial(duration=60.0)
SEARCH = Search(start=100, precision=0.1, repeats=2, max_trials=60)
COST = Cost()
SPACE = ShapeSearch(
    cpu=CpuRange(min=0.25, max=4.0),
    memory=MemoryRange(min=128 * MIB, max=2048 * MIB),
    steps=5,
    max_shapes=8,
)
START = PodShape(cpu=1.0, memory=512 * MIB)
TIE = 0.02  # of the price per unit
NOISE = {"jitter": 0.01, "stall": 0.05, "seed": 7}


@dataclass(frozen=True)
class Model:
    """A target whose usage is fixed + per_unit × level, per resource."""

    name: str
    cpu_per_unit: float  # cores per unit of load
    cpu_fixed: float  # cores used at no load (a runtime's own threads)
    memory_fixed: float  # bytes
    memory_per_unit: float  # bytes per unit of load
    cpu_share: float = 0.85  # of the quota, where latency breaks the bar
    memory_share: float = 0.95  # of the limit, where the attribution calls memory

    def capacity(self, shape: PodShape) -> tuple[int, LimitedBy]:
        by_cpu = (self.cpu_share * shape.cpu - self.cpu_fixed) / self.cpu_per_unit
        by_memory = (self.memory_share * shape.memory - self.memory_fixed) / self.memory_per_unit
        if by_cpu <= by_memory:
            return max(1, int(by_cpu)), LimitedBy.CPU
        return max(1, int(by_memory)), LimitedBy.MEMORY

    def measured(self, shape: PodShape, level: int | None) -> MeasuredShape:
        _, limited_by = self.capacity(shape)
        if level is None:
            return MeasuredShape(shape, None, limited_by)
        return MeasuredShape(
            shape,
            level,
            limited_by,
            cpu_used=self.cpu_fixed + self.cpu_per_unit * level,
            memory_used=self.memory_fixed + self.memory_per_unit * level,
        )


MODELS = (
    # 2 ms of CPU per request over 150 millicores of runtime; 40 MiB + 200 KiB per request/s.
    Model(
        "cpu-bound",
        cpu_per_unit=0.002,
        cpu_fixed=0.15,
        memory_fixed=40 * MIB,
        memory_per_unit=200 * 1024,
    ),
    # Held streams: 2 MiB each on 30 MiB of runtime, half a millicore each.
    Model(
        "memory-bound",
        cpu_per_unit=0.0005,
        cpu_fixed=0.0,
        memory_fixed=30 * MIB,
        memory_per_unit=2 * MIB,
    ),
)


def search_shape(
    model: Model, shape: PodShape, search: Search, noise: bool
) -> tuple[int | None, int]:
    """The ceiling the trial search finds for `shape`, and the trials it took."""
    capacity, _ = model.capacity(shape)
    target = SimTarget(capacity=capacity, **(NOISE if noise else {}))
    result = run(search, TRIAL, target)
    return result.finished.ceiling.level, len(result.history)


def analytic_price(model: Model, shape: PodShape) -> float:
    return COST.per_hour(shape) / model.capacity(shape)[0]


def truth_cheapest(model: Model) -> PodShape:
    cpus, mems = grid(SPACE, START)
    shapes = [PodShape(cpu=c, memory=m) for c in cpus for m in mems]
    return min(shapes, key=lambda s: analytic_price(model, s))


def bench(model: Model, noise: bool) -> dict[str, object]:
    measured: list[MeasuredShape] = []
    guided = independent = 0
    rows = []
    while True:
        choice = next_shape(SPACE, START, COST, measured)
        if not isinstance(choice, NextShape):
            stop = choice.reason
            break
        level, trials = search_shape(
            model, choice.shape, predicted_search(SEARCH, choice.predicted), noise
        )
        _, alone = search_shape(model, choice.shape, SEARCH, noise)
        guided += trials
        independent += alone
        measured.append(model.measured(choice.shape, level))
        analytic, limited_by = model.capacity(choice.shape)
        rows.append((choice.shape, analytic, level, choice.predicted, limited_by, trials, alone))
    best = min(
        (m for m in measured if m.level),
        key=lambda m: cost_per_unit(COST, m.shape, m.level) or float("inf"),
    )
    truth = truth_cheapest(model)
    print(f"\n{model.name}: stopped: {stop}")
    print(
        f"  {'shape':>18} {'analytic':>9} {'found':>7} {'predicted':>9} {'limit':>7} "
        f"{'guided':>6} {'alone':>6} {'$/1k/h':>8}"
    )
    for shape, analytic, level, predicted, limited_by, trials, alone in rows:
        price = cost_per_unit(COST, shape, level)
        print(
            f"  {shape_label(shape):>18} {analytic:9d} {level or 0:7d} "
            f"{predicted if predicted is not None else '—':>9} {limited_by.value:>7} "
            f"{trials:6d} {alone:6d} {(price or 0) * 1000:8.4f}"
        )
    # Shapes whose analytic prices differ by less than TIE cannot be told apart by
    # ceilings measured to the search's precision: either is the right answer.
    excess = analytic_price(model, best.shape) / analytic_price(model, truth) - 1
    correct = excess <= TIE
    print(
        f"  cheapest found {shape_label(best.shape)}; analytic cheapest of the grid "
        f"{shape_label(truth)}; the found one costs {excess:+.1%} per unit more: "
        f"{'right' if correct else 'WRONG'} (ties within {TIE:.0%})"
    )
    return {
        "shapes": len(measured),
        "guided": guided,
        "independent": independent,
        "cheapest": shape_label(best.shape),
        "correct": correct,
        "within_10pct": all(
            level is not None and abs(level - analytic) <= 0.1 * analytic
            for _, analytic, level, *_ in rows
        ),
    }


def bench_real() -> None:
    """The real targets: each spec's shapes measured, against the analytic capacities."""
    judged = {}
    with tempfile.TemporaryDirectory(prefix="shapes-real-") as folder:
        for name, spec_file in SPECS.items():
            spec = spec_of(name)
            report = run_spec(spec_file, Path(folder) / name)
            judged[name] = result = judge(spec, report)
            print(f"\n{name} ({spec_file.name}): {report['outcome']}, {result.trials} trials")
            print(
                f"  {'shape':>18} {'analytic':>9} {'found':>7} {'error':>7} {'limit':>7} "
                f"{'$/1k/h':>8}"
            )
            for row in result.rows:
                error = "—" if row.error is None else f"{row.error:+.1%}"
                print(
                    f"  {row.label:>18} {row.analytic:9.1f} {row.found or 0:7d} {error:>7} "
                    f"{row.limited_by:>7} {(row.cost_per_thousand or 0):8.4f}"
                )
            print(
                f"  cheapest found {result.cheapest_found}; analytically cheapest "
                f"{result.cheapest_analytic}: {'right' if result.cheapest_correct else 'WRONG'}"
            )
    print(
        json.dumps(
            {
                "shapes": sum(len(r.rows) for r in judged.values()),
                "trials_guided": None,
                "trials_independent": sum(r.trials for r in judged.values()),
                "saved_pct": None,
                "cheapest": "; ".join(f"{n}: {r.cheapest_found}" for n, r in judged.items()),
                "cheapest_correct": all(r.cheapest_correct for r in judged.values()),
                "within_10pct": all(row.within for r in judged.values() for row in r.rows),
                "max_error_pct": round(
                    100
                    * max(
                        1.0 if row.error is None else abs(row.error)
                        for r in judged.values()
                        for row in r.rows
                    ),
                    1,
                ),
            }
        )
    )


# The guided search's grid and start on each real target: no shape above one CPU (a
# 1200m shape was granted about 1.05 cores here); the memory-bound target keeps one CPU
# on every shape (tests/e2e/specs/shapes-memory-bound.yaml says why).
REAL_GRIDS: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "cpu-bound": (
        {"cpu": {"min": "250m", "max": "1"}, "memory": {"min": "1Gi", "max": "4Gi"}},
        {"cpu": "250m", "memory": "4Gi"},
    ),
    "memory-bound": (
        {"cpu": {"min": "1", "max": "1"}, "memory": {"min": "128Mi", "max": "512Mi"}},
        {"cpu": "1", "memory": "128Mi"},
    ),
}


def _variant_file(name: str, folder: Path, shapes: dict[str, Any], start: Any) -> Path:
    """The target's spec file with `shapes` (and the start shape) replaced."""
    document = yaml.safe_load(SPECS[name].read_text())
    document["spec"]["shapes"] = shapes
    document["spec"]["target"]["resources"] = start
    path = folder / f"{name}-{next(iter(shapes))}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _print_judged(title: str, result: Judged) -> None:
    print(f"\n{title}: {result.trials} trials")
    for row in result.rows:
        error = "—" if row.error is None else f"{row.error:+.1%}"
        print(
            f"  {row.label:>18} analytic {row.analytic:6.1f} found {row.found or 0:4d} "
            f"{error:>7} {row.limited_by:>7} ${(row.cost_per_thousand or 0):.4f}/1k/h"
        )
    print(f"  cheapest found {result.cheapest_found}; analytically {result.cheapest_analytic}")


def bench_real_guided() -> None:
    """The guided search on the real targets, and the same shapes searched independently."""
    guided_trials = independent_trials = 0
    verdicts: dict[str, Judged] = {}
    with tempfile.TemporaryDirectory(prefix="shapes-guided-") as tmp:
        folder = Path(tmp)
        for name, (space, start) in REAL_GRIDS.items():
            spec = spec_of(name)
            search = {**space, "steps": 3, "maxShapes": 5}
            guided_file = _variant_file(name, folder, {"search": search}, start)
            guided = judge(spec, run_spec(guided_file, folder / f"{name}-guided"))
            _print_judged(f"{name}, guided from {start}", guided)
            shapes = [{"cpu": r.shape.cpu, "memory": r.shape.memory} for r in guided.rows]
            alone_file = _variant_file(name, folder, {"explicit": shapes}, start)
            alone = judge(spec, run_spec(alone_file, folder / f"{name}-alone"))
            _print_judged(f"{name}, the same shapes independently", alone)
            guided_trials += guided.trials
            independent_trials += alone.trials
            verdicts[name] = guided
    print(
        json.dumps(
            {
                "shapes": sum(len(r.rows) for r in verdicts.values()),
                "trials_guided": guided_trials,
                "trials_independent": independent_trials,
                "saved_pct": round(100 * (1 - guided_trials / independent_trials), 1),
                "cheapest": "; ".join(f"{n}: {r.cheapest_found}" for n, r in verdicts.items()),
                "cheapest_correct": all(r.cheapest_correct for r in verdicts.values()),
                "within_10pct": all(row.within for r in verdicts.values() for row in r.rows),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--noise", action="store_true", help=f"simulate host noise {NOISE}")
    mode.add_argument(
        "--real", action="store_true", help="measure the real example targets (minutes)"
    )
    mode.add_argument(
        "--real-guided",
        action="store_true",
        help="the guided search on the real targets, against independent searches (minutes)",
    )
    args = parser.parse_args()
    if args.real:
        bench_real()
        return
    if args.real_guided:
        bench_real_guided()
        return
    print(f"grid {SPACE.to_wire()}, start {shape_label(START)}, prices {COST.to_wire()}")
    print(f"trial search {SEARCH.to_wire()}")
    results = [bench(model, args.noise) for model in MODELS]
    guided = sum(int(r["guided"]) for r in results)  # type: ignore[call-overload]
    independent = sum(int(r["independent"]) for r in results)  # type: ignore[call-overload]
    print(f"\nguided / independent trials: {guided} / {independent} = {guided / independent:.1%}")
    print(
        json.dumps(
            {
                "shapes": sum(int(r["shapes"]) for r in results),  # type: ignore[call-overload]
                "trials_guided": guided,
                "trials_independent": independent,
                "saved_pct": round(100 * (1 - guided / independent), 1),
                "cheapest": "; ".join(
                    f"{m.name}: {r['cheapest']}" for m, r in zip(MODELS, results, strict=False)
                ),
                "cheapest_correct": all(bool(r["correct"]) for r in results),
            }
        )
    )


if __name__ == "__main__":
    main()
