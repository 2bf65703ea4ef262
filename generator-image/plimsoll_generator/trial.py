"""One trial in one worker process: set up, warm up, measure, drain, report.

Called by `workers.py` (in the control process when there is one worker, in
each worker process otherwise). It picks the drivers the workload needs, runs
them for warm-up + duration, stops on abort, and assembles the `TrialResult`
for this process; `workers.py` merges several of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Protocol

from plimsoll.api.timeline import TimelineSlice
from plimsoll.api.trial import FloorResult, TrialRequest, TrialResult, TrialState
from plimsoll.api.workload import LoadModel, runnable_problem
from plimsoll.api.workload import Protocol as Wire
from plimsoll.shared.load_split import user_count
from plimsoll_generator.client_ips import ClientIpError, verify_target
from plimsoll_generator.context import TrialContext
from plimsoll_generator.cpu import CpuMeter
from plimsoll_generator.floor import FloorOrder, FloorProcess
from plimsoll_generator.recorder import Recorder
from plimsoll_generator.start_time import check_lead, wait_for_start
from plimsoll_generator.target_address import vetted_address
from plimsoll_generator.timeline import TimelineCutter

DRAIN_LIMIT = 30.0  # the longest we wait for calls in flight at the end
# A start later than this is said in the result's errors: the generators' clocks are
# held to agree within 50 ms (plimsoll.decide.clock), so later is no longer "together".
LATE_START_NOTED = 0.050


class NotBuiltError(ValueError):
    """A workload combination this generator does not implement (said, not faked)."""


class Driver(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...


def driver_for(protocol: Wire, model: LoadModel) -> Callable[[TrialContext, float], Driver] | None:
    """The driver of each (protocol, model) pair the generator runs, given the trial's
    context and level; None for any other pair. `plimsoll.api.workload.RUNNABLE` lists
    the same pairs (a test holds the two together), so the model refuses the rest."""
    from plimsoll_generator.conversation import Conversations
    from plimsoll_generator.mcp_users import McpRate, McpUsers
    from plimsoll_generator.open_model import ClosedLoop, OpenModel
    from plimsoll_generator.replay import ReplayDriver

    def users(
        kind: Callable[[TrialContext, int], Driver],
    ) -> Callable[[TrialContext, float], Driver]:
        return lambda ctx, level: kind(ctx, user_count(level))

    table: dict[tuple[Wire, LoadModel], Callable[[TrialContext, float], Driver]] = {
        (Wire.HTTP, LoadModel.RATE): OpenModel,
        (Wire.HTTP, LoadModel.REPLAY): ReplayDriver,
        (Wire.HTTP, LoadModel.USERS): users(ClosedLoop),
        (Wire.MCP, LoadModel.RATE): McpRate,
        (Wire.MCP, LoadModel.USERS): users(McpUsers),
        (Wire.OPENAI, LoadModel.USERS): users(Conversations),
        (Wire.ANTHROPIC, LoadModel.USERS): users(Conversations),
    }
    return table.get((protocol, model))


def build_drivers(ctx: TrialContext) -> list[Driver]:
    from plimsoll_generator.streams import StreamsProbeDriver

    workload = ctx.request.workload
    drivers: list[Driver] = []
    if workload.streams is not None:
        drivers.append(StreamsProbeDriver(ctx, workload.streams))
    # The model refuses these already (`runnable_problem`); a request sent past it stops
    # here, said so, rather than running another driver than the spec asked for.
    problem = runnable_problem(workload.protocol, workload.model, workload.users is not None)
    make = driver_for(workload.protocol, workload.model)
    if problem is not None or make is None:
        raise NotBuiltError(f"workload: {problem}")
    drivers.append(make(ctx, ctx.request.level))
    return drivers


async def _check_client_ips(request: TrialRequest, address: str | None) -> None:
    config = request.workload.client_ips
    if config is None or not config.verify:
        return
    limit = min(request.workload.timeout, 10.0)
    await verify_target(request.target_url, request.workload.tls_verify, config, limit, address)


async def _drain(ctx: TrialContext, limit: float) -> None:
    deadline = time.perf_counter() + limit
    # Polled: in-flight counts change in transport callbacks, which set no event.
    while ctx.in_flight > 0 and time.perf_counter() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.02)


async def _floor(
    floor: FloorProcess, ready: asyncio.Task[bool], request: TrialRequest, ctx: TrialContext
) -> FloorResult:
    """The floor process's probes over the trial's window, once it is ready (an empty
    result if it never was)."""
    assert request.floor is not None
    if not await ready:
        return FloorResult()
    now_wall, now = time.time(), time.perf_counter()
    order = FloorOrder(
        probe=request.floor,
        timeout=request.workload.timeout,
        verify=request.workload.tls_verify,
        measure_from=now_wall + (ctx.measure_from - now),
        end=now_wall + (ctx.end - now),
    )
    return await floor.probe(order)


async def run_trial(
    request: TrialRequest,
    trial_id: str,
    abort: asyncio.Event,
    on_slice: Callable[[TimelineSlice], None] | None = None,
    floor: FloorProcess | None = None,
) -> TrialResult:
    """Run `request` to its end (or until `abort` is set) and report this process's share;
    `on_slice` gets each timeline slice as it is cut (the progress a poll sees). `floor`
    is the generator's floor process, started before it took trials; without one, a
    floor process is started for this trial alone and ended with it."""
    recorder = Recorder([op.name for op in request.workload.mix], request.request_bounds)
    try:
        if request.replica_urls and request.refused_networks:
            # Replica URLs are not vetted against the refused networks: only the local
            # platform (which refuses none) sends them.
            raise NotBuiltError(
                "replicaUrls with refusedNetworks is not built: several replicas are driven "
                "on the local platform only"
            )
        address = await vetted_address(request)
        await _check_client_ips(request, address)
        check_lead(request.start_at)
        ctx = TrialContext.create(request, recorder, address)
        drivers = build_drivers(ctx)
    except (ClientIpError, NotBuiltError, ValueError) as exc:
        return TrialResult(
            id=trial_id, state=TrialState.FAILED, level=request.level, errors=[str(exc)]
        )
    owned = floor is None
    floor = (floor or FloorProcess()) if request.floor is not None else None
    try:
        meter = CpuMeter()
        timeline = TimelineCutter(ctx, on_slice)
        floor_ready = asyncio.create_task(floor.start()) if floor is not None else None
        if request.start_at is None and floor_ready is not None:
            await floor_ready  # no start to keep: the floor's first probes are not lost
        started_late = await wait_for_start(request.start_at, abort)
        if started_late > LATE_START_NOTED:
            recorder.error(
                f"began {started_late * 1000:.0f} ms after the trial's start time: the "
                "request came, or the trial was built, that late, so this generator started "
                "after the others"
            )
        ctx.start_clock()
        tasks: list[asyncio.Task[None]] = [asyncio.create_task(timeline.run())]
        floor_result = (
            asyncio.create_task(_floor(floor, floor_ready, request, ctx))
            if floor is not None and floor_ready is not None
            else None
        )
        for driver in drivers:
            driver.start()

        aborted = False
        for phase_end, opens_window in ((ctx.measure_from, True), (ctx.end, False)):
            delay = phase_end - time.perf_counter()
            if delay > 0 and not aborted:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(abort.wait(), delay)
            aborted = aborted or abort.is_set()
            if opens_window and not aborted:
                meter.start()
        stopped_at = time.perf_counter()
        ctx.stopped.set()
        for driver in drivers:
            driver.stop()
        if not aborted:
            await _drain(ctx, min(request.workload.timeout, DRAIN_LIMIT))
            if ctx.in_flight > 0:
                recorder.error(f"{ctx.in_flight} calls still in flight at the end were not counted")
        await meter.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        pools = [ctx.pool, *ctx.extra_pools]
        for pool in pools:
            pool.close()
        if floor is not None and aborted:
            # Its answer would come at the window's end: none is wanted; the next trial
            # starts it again.
            await floor.stop()
        floor_answer = await floor_result if floor_result is not None else None
        measured = max(0.0, min(stopped_at, ctx.end) - ctx.measure_from)
        wait = meter.wait
        return TrialResult(
            id=trial_id,
            state=TrialState.ABORTED if aborted else TrialState.DONE,
            level=request.level,
            operations=recorder.results(),
            streams=ctx.streams,
            floor=floor_answer,
            nominal=request.level * measured
            if request.workload.model is LoadModel.RATE
            else float(ctx.intended),
            intended=ctx.intended,
            sent=ctx.sent,
            sent_on_time=ctx.on_time,
            late_tolerance=request.workload.late_tolerance,
            start_lag=ctx.start_lag.encoded() if ctx.start_lag.count() else None,
            dropped_starts=ctx.dropped_starts,
            page_views=ctx.page_views,
            bot_requests=ctx.bot_requests,
            measured_seconds=measured,
            started_late_seconds=started_late,
            cpu_seconds=meter.cpu_seconds,
            cpu_wait_seconds=wait[0] if wait is not None else None,
            cpu_timeslices=wait[1] if wait is not None else None,
            host_steal_share=meter.steal_share,
            cores=1,
            peak_cpu_fraction=meter.peak_fraction,
            bytes_in=sum(pool.bytes_in for pool in pools),
            bytes_out=sum(pool.bytes_out for pool in pools),
            errors=recorder.errors,
            timeline=timeline.finish(measured),
        )
    finally:
        if floor is not None and owned:  # a floor process of this trial's ends with it
            await floor.stop()
