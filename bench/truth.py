"""Does Plimsoll find the truth with default settings? Targets whose capacity is known.

    python bench/truth.py            # about 5-8 minutes on 2 cores

Three measurements, each against an answer known before the run:

1. CPU: `examples/targets/cpu_bound.py` burns WORK_MS of CPU per request, pinned
   with cgroups to QUOTA cores, so it serves at most QUOTA / WORK_MS requests/s.
   `run_test` (what `plimsoll run` calls) searches for its ceiling with the
   DEFAULT arrival (Poisson), achieved-share bar (99%) and noise settings, once
   on the host as it is and once pinned to one CPU with HOGS processes spinning
   on it. The host's CPU pressure (PSI) is printed before and after: on a shared
   machine "as it is" may be busy, and the quiet run then ends inconclusive too.
   The busy run must end noisy or inconclusive, or within 10% of the truth:
   never a confident wrong ceiling.
2. Poisson false failures: the generator's real pacer and schedule at 20, 100
   and 1,000/s over 50 simulated 15 s trials each, judged by the real verdict at
   a 99% bar (the old share, sent ÷ nominal, is counted beside it), plus every
   step of the quiet CPU run at or below 80% of the truth that failed on its
   achieved share.
3. Memory per held stream: `examples/targets/mini_gateway.py` keeps
   STREAM_KIB KiB per held WebSocket. The runner's streams probe holds a third,
   two thirds and all of STREAM_COUNT streams before the first trial and fits the
   slope of the target's working set over them (`report.stream_memory`); that
   slope is the figure. (This bench once read the trials' held streams instead;
   trials no longer hold the probe's streams, so it found none.)

4. Bursts against a CFS quota: the same target at POISSON_WORK_MS per request and
   a p99 < 50 ms bar, pinned to 0.5 CPU and then to 1 CPU, searched by Plimsoll
   with Poisson arrivals. The truth is computed independently by a discrete-event
   simulation of a single-threaded server under the quota (`bench/cfs_sim.py`:
   100 ms periods, the quota, the service time measured from the target's own
   passing steps as CPU seconds per answered request), fed Poisson arrivals of the
   same trial length. Each level Plimsoll tried is judged by the simulation too,
   and the attribution must be cpu. `--only poisson` runs this part alone, `--only shaped`
   the cases of 5-7, `--only shaped:NAME` one of them (threaded, oom, proxy, nginx).

Prints each step and the figures, then one JSON line: cpu_truth_rps,
cpu_found_rps, cpu_error_pct, poisson_false_fails, stream_truth_kib,
stream_found_kib, stream_error_pct, busy_host_outcome, poisson_truth_rps,
poisson_found_rps, poisson_error_pct, poisson_limited_by, poisson_levels_agree,
poisson_1cpu_truth_rps, poisson_1cpu_found_rps, poisson_1cpu_error_pct,
poisson_1cpu_limited_by, cpu_confirmed, and for each case of `bench/truth_shaped.py`
(5. a many-threaded target, 6. one that runs out of memory, 7. the LLM-proxy example's
event-loop proxy and 8. Debian's nginx with four workers, their truths measured apart;
each also beside CPU hogs)
its truth, found, error_pct, limited_by, confirmed, noisy_steps_quiet, hog_noisy_steps,
hog_found and hog_limited_by; shaped_missed lists what of issue 51's bar they missed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for folder in ("operator", "generator-image", ""):
    sys.path.insert(0, str(ROOT / folder))

from bench.cfs_sim import Server, ceiling, passes  # noqa: E402
from bench.hogs import cpu_hogs, pinned  # noqa: E402
from bench.pacing_sim import TRIALS, result, simulate  # noqa: E402
from bench.truth_shaped import shaped_cases  # noqa: E402
from plimsoll.api.report import RunReport  # noqa: E402
from plimsoll.api.resource import CapacityTest  # noqa: E402
from plimsoll.api.status import Ceiling, CurrentStep, Phase  # noqa: E402
from plimsoll.api.step import (  # noqa: E402
    StepRecord,
    StepResult,
    Verdict,
)
from plimsoll.decide.criteria import ACHIEVED  # noqa: E402
from plimsoll.platforms.local.platform import LocalPlatform  # noqa: E402
from plimsoll.run.progress import ProgressSink  # noqa: E402
from plimsoll.run.runner import run_test  # noqa: E402

WORK_MS = 10.0
QUOTA = 0.5
CPU = 0  # the target's CPU, and the hogs'
HOGS = 3
STREAM_KIB = 256
STREAM_COUNT = 160


class QuietSink:
    """A `ProgressSink` that prints nothing while the run goes; `run` prints each step after."""

    async def phase(self, phase: Phase, message: str) -> None:
        return None

    async def variant_started(self, name: str) -> None:
        return None

    async def variant_finished(self, ceiling: Ceiling) -> None:
        return None

    async def step_started(self, step: CurrentStep) -> None:
        return None

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        return None

    async def equipment_replaced(self, message: str) -> None:
        return None

    async def finished(self, report: RunReport) -> None:
        return None


def cpu_test(beside_hogs: bool) -> CapacityTest:
    """The CPU-bound target; workload, arrival, noise and minAchieved left at their defaults.
    Beside the hogs it is also pinned to their CPU, so they compete for that one CPU."""
    command = ["python", "examples/targets/cpu_bound.py"]
    return CapacityTest.model_validate(
        {
            "metadata": {"name": "truth-cpu"},
            "spec": {
                "target": {
                    "command": pinned(command, CPU) if beside_hogs else command,
                    "portEnv": "PORT",
                    "env": {"WORK_MS": f"{WORK_MS:g}"},
                    "resources": {"cpu": f"{QUOTA:g}", "memory": "128Mi"},
                },
                "upstream": {"routes": [{"name": "unused", "path": "/unused"}]},
                "workload": {"mix": [{"name": "work", "path": "/work"}]},
                # Shorter than the default 60 s so the bench fits in minutes; long enough for
                # a queue over capacity to grow past the bound.
                "trial": {"duration": "8s", "warmUp": "2s"},
                "search": {
                    "strategy": "doubling",
                    "start": 12,
                    "floor": 2,
                    "limit": 400,
                    "precision": "5%",
                    "repeats": 0,
                    "maxTrials": 16,
                },
                "passWhen": {"latency": [{"quantile": "p99", "below": "1s"}]},
                "generators": {"replicas": 1, "processes": 1},
            },
        }
    )


POISSON_WORK_MS = 2.0
POISSON_BOUND_MS = 50.0
POISSON_TRIAL = (8.0, 2.0)  # measured seconds, warm-up


def poisson_test(cores: float) -> CapacityTest:
    """The issue's target: 2 ms of CPU per request, bar p99 < 50 ms, Poisson arrivals."""
    duration, warm_up = POISSON_TRIAL
    return CapacityTest.model_validate(
        {
            "metadata": {"name": f"truth-poisson-{cores:g}".replace(".", "-")},
            "spec": {
                "target": {
                    "command": ["python", "examples/targets/cpu_bound.py"],
                    "portEnv": "PORT",
                    "env": {"WORK_MS": f"{POISSON_WORK_MS:g}"},
                    "resources": {"cpu": f"{cores:g}", "memory": "128Mi"},
                },
                "upstream": {"routes": [{"name": "unused", "path": "/unused"}]},
                "workload": {"mix": [{"name": "work", "path": "/work"}]},
                "trial": {"duration": f"{duration:g}s", "warmUp": f"{warm_up:g}s"},
                "search": {
                    "strategy": "doubling",
                    "start": 50,
                    "floor": 5,
                    "limit": 2000,
                    "precision": "5%",
                    "repeats": 0,
                    "maxTrials": 20,
                },
                "passWhen": {"latency": [{"quantile": "p99", "below": f"{POISSON_BOUND_MS:g}ms"}]},
                "noise": {"retries": 1},
                "generators": {"replicas": 1, "processes": 1},
            },
        }
    )


def service_ms(report: RunReport) -> float | None:
    """CPU per answered request, measured from the target's passing steps (the lowest
    half of them: far from the ceiling, where nothing queues or throttles)."""
    costs = sorted(
        (s.level, s.target.cpu_mean_cores / s.client.achieved_rate * 1000.0)
        for s in report.steps
        if s.judgement.verdict is Verdict.PASS
        and s.target is not None
        and s.target.cpu_mean_cores is not None
        and s.client is not None
        and s.client.achieved_rate > 0
    )
    if not costs:
        return None
    low = costs[: max(len(costs) // 2, 1)]
    return sum(cost for _, cost in low) / len(low)


async def poisson_case(cores: float, out: Path) -> dict[str, Any]:
    name = "poisson" if cores == 0.5 else f"poisson_{cores:g}cpu"
    report = await run(poisson_test(cores), name, out)
    cost = service_ms(report)
    ceiling_found = report.ceilings[0]
    found = ceiling_found.level if not ceiling_found.inconclusive else None
    figures: dict[str, Any] = {"limited_by": ceiling_found.limited_by.value}
    if cost is None:
        print(f"  {name}: no passing step to measure the service time from")
        return {**figures, "truth_rps": None, "found_rps": found, "error_pct": None}
    duration, warm_up = POISSON_TRIAL
    server = Server(service_ms=cost, cores=cores)
    settings: dict[str, Any] = {
        "q": 0.99,
        "bound_ms": POISSON_BOUND_MS,
        "duration": duration,
        "warm_up": warm_up,
    }
    truth = ceiling(server, **settings)
    levels = sorted(
        {s.level for s in report.steps if s.judgement.verdict.value in ("pass", "fail")}
    )
    agree = 0
    for level in levels:
        verdicts = {s.judgement.verdict.value for s in report.steps if s.level == level}
        simulated = "pass" if passes(server, level, **settings) else "fail"
        agree += simulated in verdicts
        print(f"  {name} level {level}: Plimsoll {sorted(verdicts)}, simulation {simulated}")
    error = (found - truth) / truth * 100 if found is not None else None
    print(
        f"  {name}: service {cost:.3f} ms measured; simulated truth {truth:,.1f} rps, found "
        f"{found}, error {'-' if error is None else f'{error:+.1f}%'}; "
        f"limited by {figures['limited_by']} ({ceiling_found.headroom.reason or 'thresholds'})"
    )
    return {
        **figures,
        "truth_rps": round(truth, 1),
        "found_rps": found,
        "error_pct": round(error, 2) if error is not None else None,
        "levels_agree": f"{agree} of {len(levels)}",
    }


async def poisson_main(out: Path) -> dict[str, Any]:
    half = await poisson_case(0.5, out)
    one = await poisson_case(1.0, out)
    return {
        "poisson_truth_rps": half["truth_rps"],
        "poisson_found_rps": half["found_rps"],
        "poisson_error_pct": half["error_pct"],
        "poisson_limited_by": half["limited_by"],
        "poisson_levels_agree": half.get("levels_agree"),
        "poisson_1cpu_truth_rps": one["truth_rps"],
        "poisson_1cpu_found_rps": one["found_rps"],
        "poisson_1cpu_error_pct": one["error_pct"],
        "poisson_1cpu_limited_by": one["limited_by"],
    }


def stream_test(count: int) -> CapacityTest:
    return CapacityTest.model_validate(
        {
            "metadata": {"name": f"truth-streams-{count}"},
            "spec": {
                "target": {
                    "command": ["python", "examples/targets/mini_gateway.py"],
                    "portEnv": "PORT",
                    "upstreamEnv": "UPSTREAM_URL",
                    "readinessPath": "/healthz",
                    "env": {"STREAM_BUFFER_KIB": str(STREAM_KIB), "KEEP_ALIVE_SECONDS": "5"},
                    "resources": {"cpu": "0.5", "memory": "192Mi"},
                },
                "upstream": {"routes": [{"name": "unused", "path": "/unused"}]},
                "workload": {
                    "mix": [{"name": "health", "path": "/healthz"}],
                    "streams": {"count": count, "kind": "websocket", "path": "/ws"},
                },
                "trial": {"duration": "3s", "warmUp": "3s"},
                "search": {"strategy": "steps", "levels": [2], "repeats": 0},
                "generators": {"replicas": 1, "processes": 1},
            },
        }
    )


async def run(test: CapacityTest, name: str, out: Path) -> RunReport:
    sink: ProgressSink = QuietSink()  # typed so mypy holds QuietSink to the whole protocol
    report = await run_test(test, lambda v: LocalPlatform(name, out / name), sink)
    for step in report.steps:
        contention = step.contention
        wait = contention.target_cpu_wait if contention is not None else None
        busy = " busy" if contention is not None and contention.busy else ""
        client = step.client
        starts = (
            f"{client.nominal:,.0f}/{client.intended:,}/{client.sent_on_time:,}"
            if client is not None
            else "-"
        )
        print(
            f"  {name} step {step.index}: level {step.level} {step.judgement.verdict.value}"
            f" | starts nominal/scheduled/on time {starts}"
            f" | target CPU wait {'-' if wait is None else f'{wait:.0%}'}{busy}"
            + (f" | {step.judgement.reasons[0][:160]}" if step.judgement.reasons else ""),
            flush=True,
        )
    print(f"  {name}: {'; '.join(report.summary)}", flush=True)
    return report


def poisson_false_fails() -> tuple[int, int, int]:
    """(fails with the schedule-relative share, fails with the old share, trials)."""
    from plimsoll.api.spec import Generators, Noise, PassWhen
    from plimsoll.decide.step_input import StepInput
    from plimsoll.decide.verdict import judge

    bar = PassWhen(min_achieved=0.99)
    new = old = trials = 0
    for rate in (20, 100, 1000):
        for seed in range(TRIALS):
            client = result(simulate(rate, seed), rate)
            verdict = judge(StepInput(client=client, level=rate), bar, Noise(), Generators())
            new += verdict.verdict is not Verdict.PASS
            old += client.achieved_rate / rate < 0.99
            trials += 1
    return new, old, trials


def busy_outcome(report: RunReport, truth: float) -> str:
    ceiling = report.ceilings[0]
    noisy = sum(s.judgement.verdict is Verdict.NOISY for s in report.steps)
    if ceiling.inconclusive:
        return "inconclusive"
    if ceiling.level is None:
        return "noisy" if noisy else "no level passed"
    error = (ceiling.level - truth) / truth
    if abs(error) <= 0.10:
        return f"ceiling {ceiling.level} rps within 10% ({error:+.1%}), {noisy} noisy steps"
    return f"WRONG: ceiling {ceiling.level} rps ({error:+.1%}), {noisy} noisy steps"


def stream_slope(report: RunReport) -> float | None:
    """KiB per held stream, as the streams probe fitted it: the slope of the target's
    working set over the counts it held before the first trial (a third, two thirds
    and all of STREAM_COUNT), read from the target's own cgroup."""
    if not report.stream_memory:
        print("  streams: the report has no memory per stream (the probe did not run)")
        return None
    probe = report.stream_memory[0]
    for count, memory in zip(probe.counts, probe.memory_bytes, strict=True):
        print(f"  {count} streams held: target working set {memory / 2**20:,.1f} MiB")
    return probe.bytes_per_stream / 1024


def host_pressure() -> str:
    """The whole host's CPU pressure (PSI), to read the quiet run against."""
    try:
        return Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return "not available"


async def main() -> dict[str, Any]:
    started = time.monotonic()
    truth = QUOTA / (WORK_MS / 1000)
    out = Path(tempfile.mkdtemp(prefix="plimsoll-truth-"))

    print("Poisson, simulated with the generator's pacer (50 trials at each of 20, 100, 1,000/s)")
    sim_new, sim_old, trials = poisson_false_fails()
    print(
        f"  99% bar, sent on time ÷ scheduled: {sim_new} of {trials} failed; "
        f"sent ÷ nominal (the old share) would have failed {sim_old}"
    )

    print(f"CPU: {WORK_MS:g} ms per request at {QUOTA:g} CPU, truth {truth:g} rps")
    print(f"  host before the quiet run: cpu pressure {host_pressure()}")
    quiet = await run(cpu_test(beside_hogs=False), "quiet", out)
    with cpu_hogs(CPU, HOGS, seconds=400):
        busy = await run(cpu_test(beside_hogs=True), "busy", out)

    real_false = [
        s
        for s in quiet.steps
        if s.level <= 0.8 * truth
        and s.judgement.verdict is Verdict.FAIL
        and any(r.startswith(ACHIEVED) for r in s.judgement.reasons)
    ]
    ceiling = quiet.ceilings[0]
    found = float(ceiling.level) if ceiling.level is not None and not ceiling.inconclusive else None
    error = (found - truth) / truth * 100 if found is not None else None
    print(
        f"  quiet: found {found if found is not None else 'no ceiling'} vs truth {truth:g} "
        f"({'-' if error is None else f'{error:+.1f}%'}), ratio "
        f"{'-' if found is None else f'{found / truth:.3f}'}"
    )

    print(f"Memory per held stream: {STREAM_KIB} KiB each, up to {STREAM_COUNT} streams")
    slope = stream_slope(await run(stream_test(STREAM_COUNT), "streams", out))
    stream_error = (slope - STREAM_KIB) / STREAM_KIB * 100 if slope is not None else None
    print(f"  found {'-' if slope is None else f'{slope:,.1f}'} KiB per stream vs {STREAM_KIB}")
    print("Bursts against a CFS quota: Poisson, p99 < 50 ms, at 0.5 and 1 CPU")
    bursts = await poisson_main(out)
    print("Shaped like real services: a many-threaded target, a target that runs out of memory")
    shaped = await shaped_cases(run, out)
    print(f"(took {time.monotonic() - started:,.0f} s)")
    confirmation = quiet.ceilings[0].confirmation
    return {
        **bursts,
        **shaped,
        "cpu_confirmed": confirmation is not None and confirmation.finding.value == "confirmed",
        "cpu_truth_rps": truth,
        "cpu_found_rps": found,
        "cpu_error_pct": round(error, 2) if error is not None else None,
        "poisson_false_fails": sim_new + len(real_false),
        "stream_truth_kib": STREAM_KIB,
        "stream_found_kib": round(slope, 1) if slope is not None else None,
        "stream_error_pct": round(stream_error, 2) if stream_error is not None else None,
        "busy_host_outcome": busy_outcome(busy, truth),
    }


if __name__ == "__main__":
    os.chdir(ROOT)  # the specs name their commands relative to the repository
    scratch = Path(tempfile.mkdtemp(prefix="plimsoll-truth-"))
    if sys.argv[1:] == ["--only", "poisson"]:
        figures = asyncio.run(poisson_main(scratch))
    elif sys.argv[1:] == ["--only", "shaped"]:
        figures = asyncio.run(shaped_cases(run, scratch))
    elif sys.argv[1:2] == ["--only"] and sys.argv[2].startswith("shaped:"):
        case = sys.argv[2].removeprefix("shaped:")
        figures = asyncio.run(shaped_cases(run, scratch, only=case))
    else:
        figures = asyncio.run(main())
    print(json.dumps(figures))
