"""One step: run a trial at one level, read the resources it used, judge it.

Called by the variant loop (`plimsoll.run.variant`) once per level the search
asks for. The client side comes from the generators (`trial_client`), the
server side from the platform's `MetricsSource` over the measured window
(warm-up excluded; `step_metrics`), and the verdict from the pure `plimsoll.decide.verdict`. A trial
that produced no trustworthy result is still a step: judged invalid, with the
reason, so nothing that happened is hidden.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from plimsoll.api.faults import FaultOutcome
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import (
    Contention,
    Judgement,
    StepResult,
    TrialKind,
    Verdict,
)
from plimsoll.api.streams import StreamsHeld
from plimsoll.api.trial import FloorProbe, TrialRequest, TrialResult
from plimsoll.decide.contention import EQUIPMENT, NO_BOUND, Figures, FloorBound, assess
from plimsoll.decide.fault_windows import judge_fault, with_faults
from plimsoll.decide.goodput import request_bounds
from plimsoll.decide.steadiness import steadiness
from plimsoll.decide.step_summary import floor_ms
from plimsoll.metrics.source import ROLE_TARGET, MetricsSource, Window
from plimsoll.platforms.base import Endpoints
from plimsoll.run.faults import Fired, fire_faults
from plimsoll.run.flight import Autopilot, judged
from plimsoll.run.step_metrics import ServerSide, read_server_side
from plimsoll.run.streams_probe import StreamsProbeError, during_trial, held_now, trial_workload
from plimsoll.run.trial_client import Progress, TrialFailedError, run_trial
from plimsoll.shared import histogram
from plimsoll.shared.timeline import bounded, points

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StepPlan:
    index: int
    level: int
    variant: str
    kind: TrialKind
    duration: float
    attempt: int
    floor_bound: FloorBound = NO_BOUND  # configured, or derived from the first steps


def _request(spec: CapacityTestSpec, endpoints: Endpoints, plan: StepPlan) -> TrialRequest:
    return TrialRequest(
        level=float(plan.level),
        duration=plan.duration,
        warm_up=spec.trial.warm_up,
        workload=trial_workload(spec.workload),
        target_url=endpoints.target_url,
        floor=FloorProbe(url=floor_url(endpoints), rate=spec.noise.probe_rate),
        seed=plan.index,
        slice_seconds=spec.trial.slice,
        refused_networks=endpoints.refused_target_networks,
        replica_urls=endpoints.replica_urls,
        serving_replicas=endpoints.serving_replicas,
        request_bounds=request_bounds(spec.pass_when),
    )


def floor_url(endpoints: Endpoints) -> str:
    """Where the floor is probed: the mock's floor process, else the mock's /healthz."""
    if endpoints.floor_url is not None:
        return endpoints.floor_url
    return endpoints.upstream_url.rstrip("/") + "/healthz"


def _foreign(server: ServerSide) -> float | None:
    """The host's CPU that none of the test's pieces used (other programs), or None."""
    host = server.host
    pieces = [u.cpu_mean_cores for u in server.usage.values()]
    if host is None or host.cpu_mean_cores is None or any(c is None for c in pieces):
        return None
    return max(host.cpu_mean_cores - sum(c for c in pieces if c is not None), 0.0)


def _contention(
    spec: CapacityTestSpec,
    plan: StepPlan,
    client: TrialResult,
    server: ServerSide,
    equipment_cpus: int | None,
) -> Contention:
    """The figures that tell a busy host, read from this step, and the pure decision."""
    target = server.usage.get(ROLE_TARGET)
    wait_unread: str | None = None
    if target is None:
        wait_unread = "no server side (the target runs elsewhere)"
    elif target.cpu_wait_cores is None:
        wait_unread = f"not readable from {target.source} (no schedstat or cpu.pressure series)"
    lag = (
        histogram.quantile_ms(histogram.merge([client.start_lag]), 0.99)
        if client.start_lag
        else None
    )
    # The host's total is read only where the pieces run on it (the local platform, whether
    # its samplers or Prometheus read the pieces): only there are their neighbours known.
    local = server.host is not None and target is not None
    cores = {n: u.cpu_mean_cores for n, u in server.usage.items() if u.cpu_mean_cores is not None}
    equipment = {n: c for n, c in cores.items() if n.startswith(EQUIPMENT)}
    services = {n: c for n, c in cores.items() if n != ROLE_TARGET and n not in equipment}
    figures = Figures(
        target_cpu_cores=target.cpu_mean_cores if target is not None else None,
        equipment_cpu_cores=equipment if local else None,
        service_cpu_cores=services if local else None,
        host_cpus=len(os.sched_getaffinity(0)) if local else None,
        equipment_cpus=equipment_cpus if local else None,
        foreign_cpu_cores=_foreign(server) if local else None,
        target_cpu_wait_cores=target.cpu_wait_cores if target is not None else None,
        target_cpu_wait_source=target.cpu_wait_source if target is not None else None,
        target_throttled_ratio=target.throttled_ratio if target is not None else None,
        generator_timeslices=client.cpu_timeslices,
        generator_cpu_wait_seconds=client.cpu_wait_seconds,
        start_lag_p99_ms=lag,
        late_tolerance_ms=client.late_tolerance * 1000 if lag is not None else None,
        floor_ms=floor_ms(client, spec.noise.floor_quantile),
        host_steal_share=client.host_steal_share,
        target_wait_unread=wait_unread,
    )
    return assess(figures, plan.floor_bound)


def _judge(
    spec: CapacityTestSpec,
    plan: StepPlan,
    client: TrialResult,
    server: ServerSide,
    contention: Contention,
) -> Judgement:
    from plimsoll.decide.step_input import StepInput
    from plimsoll.decide.verdict import judge

    usage = server.usage
    step = StepInput(
        client=client,
        level=plan.level,
        model=spec.workload.model,
        target=usage.get(ROLE_TARGET),
        others={k: v for k, v in usage.items() if k != ROLE_TARGET},
        promql=server.promql,
        contention=contention,
    )
    return judge(step, spec.pass_when, spec.noise, spec.generators, spec.attribution)


async def _client_side(
    spec: CapacityTestSpec,
    endpoints: Endpoints,
    plan: StepPlan,
    on_progress: Progress | None,
) -> tuple[TrialResult | None, str | None, list[Fired]]:
    """The trial as the generators measured it (None, with why, when it failed), its
    streams held beside it, and the faults fired during it."""
    probe = spec.workload.streams
    holding = probe is not None and probe.hold_during_steps
    held: StreamsHeld | None = None
    faults = [f for f in spec.trial.faults if f.at < plan.duration]
    firing: asyncio.Task[list[Fired]] | None = None
    try:
        if faults and plan.kind is TrialKind.FULL:
            if endpoints.faults is None:
                raise TrialFailedError("trial.faults: this target's platform fires no faults")
            firing = asyncio.create_task(fire_faults(endpoints.faults, faults, spec.trial.warm_up))
        if holding:
            held = await held_now(endpoints.generator_urls, endpoints.control_token)
        client = await run_trial(
            endpoints.generator_urls,
            _request(spec, endpoints, plan).model_copy(update={"duration": plan.duration}),
            level=plan.level,
            token=endpoints.control_token,
            on_progress=on_progress,
        )
        if held is not None:
            client.streams = during_trial(
                held, await held_now(endpoints.generator_urls, endpoints.control_token)
            )
        return client, None, await firing if firing is not None else []
    except (TrialFailedError, StreamsProbeError) as exc:
        return None, str(exc), []
    finally:
        if firing is not None and not firing.done():
            firing.cancel()


async def run_step(
    spec: CapacityTestSpec,
    endpoints: Endpoints,
    metrics: MetricsSource,
    plan: StepPlan,
    on_progress: Progress | None = None,
) -> StepResult:
    """One step: the trial (its slices so far to `on_progress` while it runs), the server
    side over its measured window, and the verdict."""
    started = datetime.now(UTC)
    autopilot = Autopilot.of(spec, endpoints) if plan.kind is TrialKind.FULL else None
    if autopilot is not None:
        autopilot.take_off(plan.duration)
    client, failure, fired = await _client_side(spec, endpoints, plan, on_progress)
    log = await autopilot.land() if autopilot is not None else None
    ended = datetime.now(UTC)
    measured_start = min(started + timedelta(seconds=spec.trial.warm_up), ended)
    server = ServerSide()
    if ended > measured_start:
        # Give the sampler one more reading past the end of the window.
        await asyncio.sleep(0.6)
        server = await read_server_side(spec, metrics, Window(measured_start, ended), plan.level)
    usage = server.usage
    contention: Contention | None = None
    steady = None
    outcomes: list[FaultOutcome] = []
    if client is not None:
        client.timeline = bounded(client.timeline)
        outcomes = [
            judge_fault(client.timeline, f.at, spec.pass_when, f.fault.describe(), f.taken)
            for f in fired
        ]
        if not outcomes:  # a fault's spike is no drift
            steady = steadiness([point.p99_ms for point in points(client.timeline)])
    if client is None:
        judgement = Judgement(verdict=Verdict.INVALID, reasons=[failure or "no client result"])
    else:
        contention = _contention(spec, plan, client, server, endpoints.equipment_cpus)
        judgement = with_faults(_judge(spec, plan, client, server, contention), outcomes)
    flight = None
    if log is not None and client is not None:
        flight, judgement = judged(spec, plan.level, client, log, judgement)
    return StepResult(
        index=plan.index,
        level=plan.level,
        variant=plan.variant,
        kind=plan.kind,
        attempt=plan.attempt,
        started_at=started,
        ended_at=ended,
        duration=client.measured_seconds if client is not None else 0.0,
        client=client,
        target=usage.get(ROLE_TARGET),
        others={k: v for k, v in usage.items() if k != ROLE_TARGET},
        contention=contention,
        judgement=judgement,
        steadiness=steady,
        faults=outcomes,
        flight=flight,
    )
