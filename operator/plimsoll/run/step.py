"""One step: run a trial at one level, read the resources it used, judge it.

Called by the variant loop (`plimsoll.run.variant`) once per level the search
asks for. The client side comes from the generators (`trialclient`), the
server side from the platform's `MetricsSource` over the measured window
(warm-up excluded; `stepmetrics`), and the verdict from the pure `plimsoll.decide.verdict`. A trial
that produced no trustworthy result is still a step: judged invalid, with the
reason, so nothing that happened is hidden.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import (
    Judgement,
    StepResult,
    TrialKind,
    Verdict,
)
from plimsoll.api.streams import StreamsHeld
from plimsoll.api.trial import FloorProbe, TrialRequest, TrialResult
from plimsoll.metrics.source import ROLE_TARGET, MetricsSource, Window
from plimsoll.platforms.base import Endpoints
from plimsoll.run.stepmetrics import ServerSide, read_server_side
from plimsoll.run.streamsprobe import StreamsProbeError, during_trial, held_now, trial_workload
from plimsoll.run.trialclient import TrialFailedError, run_trial

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StepPlan:
    index: int
    level: int
    variant: str
    kind: TrialKind
    duration: float
    attempt: int


def _request(spec: CapacityTestSpec, endpoints: Endpoints, plan: StepPlan) -> TrialRequest:
    return TrialRequest(
        level=float(plan.level),
        duration=plan.duration,
        warm_up=spec.trial.warm_up,
        workload=trial_workload(spec.workload),
        target_url=endpoints.target_url,
        floor=FloorProbe(
            url=endpoints.upstream_url.rstrip("/") + "/healthz", rate=spec.noise.probe_rate
        ),
        seed=plan.index,
    )


def _judge(
    spec: CapacityTestSpec,
    plan: StepPlan,
    client: TrialResult,
    server: ServerSide,
) -> Judgement:
    from plimsoll.decide.verdict import StepInput, judge

    usage = server.usage
    step = StepInput(
        client=client,
        level=plan.level,
        model=spec.workload.model,
        target=usage.get(ROLE_TARGET),
        others={k: v for k, v in usage.items() if k != ROLE_TARGET},
        promql=server.promql,
    )
    return judge(step, spec.pass_when, spec.noise, spec.generators)


async def run_step(
    spec: CapacityTestSpec,
    endpoints: Endpoints,
    metrics: MetricsSource,
    plan: StepPlan,
) -> StepResult:
    started = datetime.now(UTC)
    client: TrialResult | None = None
    failure: str | None = None
    probe = spec.workload.streams
    holding = probe is not None and probe.hold_during_steps
    held: StreamsHeld | None = None
    try:
        if holding:
            held = await held_now(endpoints.generator_urls, endpoints.control_token)
        client = await run_trial(
            endpoints.generator_urls,
            _request(spec, endpoints, plan).model_copy(update={"duration": plan.duration}),
            spec.workload.model,
            level=plan.level,
            token=endpoints.control_token,
        )
        if held is not None:
            client.streams = during_trial(
                held, await held_now(endpoints.generator_urls, endpoints.control_token)
            )
    except (TrialFailedError, StreamsProbeError) as exc:
        failure = str(exc)
        client = None
    ended = datetime.now(UTC)
    measured_start = min(started + timedelta(seconds=spec.trial.warm_up), ended)
    server = ServerSide()
    if ended > measured_start:
        # Give the sampler one more reading past the end of the window.
        await asyncio.sleep(0.6)
        server = await read_server_side(spec, metrics, Window(measured_start, ended), plan.level)
    usage = server.usage
    if client is None:
        judgement = Judgement(verdict=Verdict.INVALID, reasons=[failure or "no client result"])
    else:
        judgement = _judge(spec, plan, client, server)
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
        judgement=judgement,
    )
