"""An autoscaler flight on the local platform (issue 57): real pinned replicas of the
CPU-bound target, the HPA's decisions made by Plimsoll, one burst.

Each replica is pinned to 0.25 CPU and every request costs 10 ms of CPU, so a replica
carries at most 25 requests/s (the analytic ceiling tests/run checks the search finds).
The profile: 12 requests/s for 8 s, then 45 at once for 16 s, which needs two
replicas at the ceiling and three at the HPA's 60% target; the controller syncs every
5 s here (15 s in a cluster), so the test stays short.

- From one replica (the HPA's default-like minimum), the burst lands on a replica that
  carries 25: p99 goes over the 300 ms bar until the next sync has a second replica
  serving; the flight does not hold, and its figures say when it ran short (8 s), how
  long each new replica took, and how long p99 was over the bar. Asked to recommend and
  prove (`autoscale: {recommend: true, prove: true}`), it derives the HPA that absorbs
  the step (replicas for the peak from the start, a low target: `decide.flight_advice`)
  from the CPU the replicas used and their start time, and the profile flown again under
  that HPA holds (two replicas from the start: the proof is also the held case).

Real processes, cgroups and loopback; the product's noise and attribution defaults (a
flight that did not hold is no ceiling to put to the confirmation experiment).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plimsoll.api.autoscale import proof_variant_name
from plimsoll.api.report import RunReport
from plimsoll.api.step import Verdict
from plimsoll.api.variant import Variant
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.run.runner import run_test
from tests.localrun import RecordingSink, one_level_test

pytestmark = pytest.mark.usefixtures("mark")
BURST_AT = 8.0


async def _fly(tmp_path: Path, mark: str) -> RunReport:
    target = {
        "command": ["python", "examples/targets/cpu_bound.py"],
        "portEnv": "PORT",
        "env": {"WORK_MS": "10"},
        "resources": {"cpu": "0.25", "memory": "128Mi"},
        "autoscaler": {
            "minReplicas": 1,
            "maxReplicas": 4,
            "targetCpuUtilization": 60,
            "syncPeriod": "5s",
        },
    }
    test = one_level_test(
        "flight",
        target,
        trial={"duration": "1s", "slice": "1s"},  # the flight's profile sets its length
        search={"strategy": "autoscale"},
        workload={
            "model": "rate",
            "arrival": "uniform",
            "mix": [{"name": "work", "path": "/work"}],
            "timeout": "5s",
            "profile": [{"level": 12, "hold": f"{BURST_AT:g}s"}, {"level": 45, "hold": "16s"}],
        },
        passWhen={"latency": [{"quantile": "p99", "below": "300ms"}]},
        autoscale={"perPod": 25, "maxFailed": "1%", "recommend": True, "prove": True},
        generators={"replicas": 1, "processes": 1},
        noise={},
        attribution={},  # the product's defaults: a flight has no ceiling to confirm
    )

    def make(variant: Variant | None) -> LocalPlatform:
        name = variant.name if variant is not None else "default"
        return LocalPlatform(f"flight-{mark[:6]}-{name}", tmp_path / name)

    return await run_test(test, make, RecordingSink())


async def test_a_burst_the_autoscaler_is_late_for_does_not_hold_and_the_hpa_it_recommends_does(
    tmp_path: Path, mark: str
) -> None:
    report = await _fly(tmp_path, mark)
    step = next(s for s in report.steps if s.variant == "default")
    flight = step.flight
    assert flight is not None, step.judgement
    print(flight.sentence)
    assert step.judgement.verdict is Verdict.FAIL, (step.judgement, flight)
    assert not flight.held
    assert flight.short_at == pytest.approx(BURST_AT, abs=1.0)
    assert flight.start_replicas == 1
    assert flight.peak_replicas >= 2
    # the first new replica: the next sync (within 5 s) and its start (about a second)
    assert flight.lags, flight
    assert 0.5 <= flight.lags[0].lag_s <= 9, flight.lags
    assert flight.seconds_over_bar >= 2, flight
    assert any(c.desired > c.ready for c in flight.replicas), flight.replicas
    assert flight.sentence in step.judgement.reasons
    # The recommendation, from what the flight measured: a replica started in seconds
    # and used most of its quarter CPU at the ceiling (10 ms of CPU a request).
    advice = flight.recommendation
    assert advice is not None, flight.no_recommendation
    print(advice.model_dump_json(indent=1))
    assert flight.pod_start_s is not None
    assert 0 < advice.pod_start_s <= 5
    assert 0.6 <= advice.cpu_at_ceiling <= 1.1
    settings = advice.autoscaler
    assert settings.min_replicas == 2  # the step arrives within the lag: 45 at 25 each
    assert settings.target_cpu_utilization < 60
    # The proof: the same profile under that HPA, as a variant of its own; it held.
    proof = [s for s in report.steps if s.variant == proof_variant_name("default")]
    assert proof, [s.variant for s in report.steps]
    proven = proof[-1].flight
    assert proven is not None
    print(proven.sentence)
    assert proven.held, proven
    assert proven.short_at is None
    assert proven.seconds_over_bar == 0
    assert proven.recommendation is None  # the proof recommends nothing of its own
    assert proof[-1].judgement.verdict is Verdict.PASS
