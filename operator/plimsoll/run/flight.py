"""A flight's step (issue 57): the autoscaler runs beside the trial, and the trial is
judged by what the flight lived through.

`Autopilot.of` finds a flight in the spec and its autoscaler in the endpoints: the
cluster's HPA controller, watched (the Kubernetes platform's), or Plimsoll's simulation
of it over a replica pool (the local platform's pinned replicas); `take_off` starts it
beside the trial for its length, `land` waits for it and hands back its log (the
replica counts, its CPU readings, each replica's start). `judged` turns the trial's own
timeline and that log into the flight's figures (`decide.flight`), the recommended HPA
when the spec asks for one (`decide.flight_advice`), and the step's verdict: it passed
when the flight held.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from plimsoll.api.autoscale import FlightLog, FlightResult
from plimsoll.api.spec import CapacityTestSpec, Strategy
from plimsoll.api.step import Judgement, Verdict
from plimsoll.api.trial import TrialResult
from plimsoll.decide import hpa as hpa_rules
from plimsoll.decide.flight import measure, profile_words, slices_of
from plimsoll.decide.flight_advice import NoRecommendation, recommend
from plimsoll.decide.proof import p99_bound_ms
from plimsoll.platforms.base import Endpoints, FlightAutoscaler
from plimsoll.run.autoscaler import SimulatedHpa
from plimsoll.shared.rate_profile import of_phases


@dataclass
class Autopilot:
    autoscaler: FlightAutoscaler
    task: asyncio.Task[None] | None = None

    @classmethod
    def of(cls, spec: CapacityTestSpec, endpoints: Endpoints) -> Autopilot | None:
        """The autoscaler of a flight, or None for any other step."""
        autoscaler = spec.target.autoscaler
        if spec.search.strategy is not Strategy.AUTOSCALE or autoscaler is None:
            return None
        if endpoints.autoscaler is not None:
            return cls(endpoints.autoscaler)
        if endpoints.replica_pool is None:
            return None
        loop = asyncio.get_running_loop()
        hpa = hpa_rules.of_spec(autoscaler)
        return cls(SimulatedHpa(hpa, endpoints.replica_pool, loop.time))

    def take_off(self, seconds: float) -> None:
        self.task = asyncio.create_task(self.autoscaler.run(seconds))

    async def land(self) -> FlightLog:
        """The autoscaler's log of the flight, once its time is up (or at once, if the
        trial ended early)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
        if self.task is not None:
            await asyncio.gather(self.task, return_exceptions=True)
        return self.autoscaler.log()


def judged(
    spec: CapacityTestSpec,
    level: int,
    client: TrialResult,
    log: FlightLog,
    judgement: Judgement,
) -> tuple[FlightResult, Judgement]:
    """The flight's figures (and, asked for, the HPA it recommends) and the step's
    verdict: a trial that cannot be trusted stays so; otherwise it passed if the flight
    held."""
    profile, autoscale, autoscaler = spec.workload.profile, spec.autoscale, spec.target.autoscaler
    bar_ms = p99_bound_ms(spec.pass_when)
    # spec_checks.autoscale_problems holds a flight's spec to each of these
    if not (profile and autoscale and autoscaler and bar_ms is not None):
        raise ValueError("a flight needs workload.profile, autoscale, target.autoscaler, a p99 bar")
    slices = slices_of(client.timeline, log.replicas, of_phases(profile), level)
    flight = measure(
        slices,
        per_pod=autoscale.per_pod,
        bar_ms=bar_ms,
        max_failed_share=autoscale.max_failed,
        profile=profile_words(profile, spec.unit),
        stabilization_s=hpa_rules.of_spec(autoscaler).scale_down.stabilization_seconds,
    )
    update: dict[str, object] = {
        "controller": log.controller,
        "replicas": log.replicas,
        "pod_start_s": round(max(log.starts), 2) if log.starts else None,
    }
    if autoscale.recommend and slices:
        advice = recommend(
            autoscaler,
            profile,
            slices,
            log.readings,
            log.starts,
            per_pod=autoscale.per_pod,
            bar_ms=bar_ms,
        )
        if isinstance(advice, NoRecommendation):
            update["no_recommendation"] = advice.reason
        else:
            update["recommendation"] = advice
    flight = flight.model_copy(update=update)
    if judgement.verdict is Verdict.INVALID or not slices:
        return flight, judgement
    verdict = Verdict.PASS if flight.held else Verdict.FAIL
    return flight, Judgement(verdict=verdict, reasons=[] if flight.held else [flight.sentence])
