"""The streams probe, before the first trial: memory per held stream, and holding them.

Called by the runner once per variant when `workload.streams` is set, after the
up-front scrape check. It reads the target's working set with no stream held,
then asks the generators to hold a third, two thirds and all of `count` idle
streams (`POST /streams`, split across the generators; each count adds to those
already held), waits until they are open, and reads the working set again at each
count. The slope over the counts (`plimsoll.decide.stream_memory`) goes into the
report with its basis and the streams that fit under the limit. With
`holdDuringSteps` the streams then stay held through every trial; otherwise they
are closed before the search starts, and each step reports what befell them
during its trial (`during_trial`: dropped, silent). Trials never open the probe's
streams themselves (`trial_workload`), so they are never reopened per trial.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from datetime import UTC, datetime

import httpx
from pydantic import ValidationError

from plimsoll.api.run_record import RunRecord
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import ResourceUsage
from plimsoll.api.streams import StreamMemory, StreamsHeld, StreamsHold
from plimsoll.api.trial import CONTROL_TOKEN_HEADER, StreamHealth
from plimsoll.api.workload import LoadModel, Workload
from plimsoll.decide.scrape_window import minimum_window
from plimsoll.decide.stream_memory import StreamMemoryError, memory_per_stream, stream_counts
from plimsoll.metrics.source import ROLE_TARGET, MetricsSource, Window
from plimsoll.platforms.base import Endpoints
from plimsoll.shared.load_split import split_load

READ_SECONDS = 2.0  # each memory reading: a short window's mean (cgroups sample at 4 Hz)
SETTLE_SECONDS = 1.0  # after the streams are open, for the target's allocations to land
OPEN_WITHIN = 120.0  # for every stream of one count to open
POLL_SECONDS = 0.25


class StreamsProbeError(RuntimeError):
    """The probe could not measure; the message says why."""


def trial_workload(workload: Workload) -> Workload:
    """The workload a trial runs: the probe's streams are held by the probe, not the trial."""
    return workload if workload.streams is None else workload.model_copy(update={"streams": None})


async def _ask(
    client: httpx.AsyncClient, method: str, url: str, body: object = None
) -> StreamsHeld:
    try:
        response = await client.request(method, f"{url}/streams", json=body)
        response.raise_for_status()
        return StreamsHeld.model_validate(response.json())
    except (httpx.HTTPError, ValidationError, ValueError) as exc:
        detail = exc.response.text[:300] if isinstance(exc, httpx.HTTPStatusError) else exc
        raise StreamsProbeError(f"generator {url} /streams: {detail}") from exc


async def _hold(
    client: httpx.AsyncClient,
    count: int,
    spec: CapacityTestSpec,
    endpoints: Endpoints,
) -> None:
    urls = endpoints.generator_urls
    shares = split_load(count, len(urls), LoadModel.USERS)  # whole streams that add up
    for url, share in zip(urls, shares, strict=True):
        hold = StreamsHold(
            count=int(share.level),
            workload=spec.workload,
            target_url=endpoints.target_url,
            refused_networks=endpoints.refused_target_networks,
        )
        await _ask(client, "POST", url, hold.to_wire())


async def _until_open(client: httpx.AsyncClient, urls: Sequence[str], count: int) -> None:
    deadline = time.monotonic() + OPEN_WITHIN
    while True:
        held = [await _ask(client, "GET", url) for url in urls]
        opened = sum(h.open for h in held)
        if opened >= count:
            return
        failed = sum(h.health.failed_to_open + h.health.dropped for h in held)
        if failed or time.monotonic() > deadline:
            errors = "; ".join(e for h in held for e in h.errors[:2]) or "no reason given"
            raise StreamsProbeError(
                f"{opened:,} of {count:,} streams open ({failed:,} failed or dropped): {errors}"
            )
        await asyncio.sleep(POLL_SECONDS)


async def hold_streams(spec: CapacityTestSpec, endpoints: Endpoints) -> None:
    """Hold all of the probe's streams at once and return when they are open: a platform
    of its own (the confirmation's) then runs its trial with them held, as the search's
    trials ran. Raises StreamsProbeError when they do not open."""
    probe = spec.workload.streams
    if probe is None:
        return
    async with _client(endpoints.control_token) as client:
        await _hold(client, probe.count, spec, endpoints)
        await _until_open(client, endpoints.generator_urls, probe.count)
    await asyncio.sleep(SETTLE_SECONDS)


async def _working_set(metrics: MetricsSource, seconds: float) -> ResourceUsage:
    start = datetime.now(UTC)
    await asyncio.sleep(seconds)
    usage = (await metrics.usage(Window(start, datetime.now(UTC)))).get(ROLE_TARGET)
    if usage is None or usage.memory_mean_bytes is None:
        reasons = "; ".join(usage.missing) if usage is not None else "no target figures"
        raise StreamsProbeError(f"the target's memory could not be read: {reasons}")
    return usage


async def measure_stream_memory(
    spec: CapacityTestSpec,
    variant: str,
    endpoints: Endpoints,
    metrics: MetricsSource,
    scrape_interval: float | None,
) -> StreamMemory:
    """Hold the probe's streams in rising counts; memory per stream from the slope."""
    probe = spec.workload.streams
    if probe is None:
        raise StreamsProbeError("no workload.streams to probe")
    counts = stream_counts(probe.count)
    # Through Prometheus each reading needs a window it can read (three scrapes).
    seconds = max(READ_SECONDS, minimum_window(scrape_interval) if scrape_interval else 0.0)
    urls = endpoints.generator_urls
    async with _client(endpoints.control_token) as client:
        baseline = await _working_set(metrics, seconds)
        points: list[tuple[int, float]] = []
        usage = baseline
        for count in counts:
            await _hold(client, count, spec, endpoints)
            await _until_open(client, urls, count)
            await asyncio.sleep(SETTLE_SECONDS)
            usage = await _working_set(metrics, seconds)
            assert usage.memory_mean_bytes is not None  # _working_set checked it
            points.append((count, float(usage.memory_mean_bytes)))
    limit = usage.memory_limit_bytes
    return memory_per_stream(
        points,
        variant=variant,
        baseline=baseline.memory_mean_bytes,
        limit=float(limit) if limit is not None else None,
    )


def _client(token: str | None) -> httpx.AsyncClient:
    """A client for the generators' control API, carrying the run's token."""
    headers = {CONTROL_TOKEN_HEADER: token} if token else {}
    return httpx.AsyncClient(timeout=httpx.Timeout(10.0), headers=headers)


async def held_now(urls: Sequence[str], token: str | None = None) -> StreamsHeld:
    """Every generator's held streams, summed."""
    async with _client(token) as client:
        held = [await _ask(client, "GET", url) for url in urls]
    health = StreamHealth(
        opened=sum(h.health.opened for h in held),
        failed_to_open=sum(h.health.failed_to_open for h in held),
        dropped=sum(h.health.dropped for h in held),
        missed_keep_alives=sum(h.health.missed_keep_alives for h in held),
        keep_alives=sum(h.health.keep_alives for h in held),
    )
    return StreamsHeld(
        requested=sum(h.requested for h in held),
        open=sum(h.open for h in held),
        health=health,
        errors=[e for h in held for e in h.errors],
    )


def during_trial(before: StreamsHeld, after: StreamsHeld) -> StreamHealth:
    """What befell the held streams over one trial, as that trial's stream figures: the
    verdict's `healthyStreams` then judges streams held through the step like its own."""
    was, now = before.health, after.health
    return StreamHealth(
        opened=before.open,
        failed_to_open=now.failed_to_open - was.failed_to_open,
        dropped=now.dropped - was.dropped,
        missed_keep_alives=now.missed_keep_alives - was.missed_keep_alives,
        held_at_end=after.open,
        keep_alives=now.keep_alives - was.keep_alives,
    )


async def release_streams(urls: Sequence[str], token: str | None = None) -> None:
    """Close every generator's held streams (best effort: a generator may be gone). A POST,
    not a DELETE: through the API server's pod proxy the operator may only GET and POST."""
    async with _client(token) as client:
        for url in urls:
            with contextlib.suppress(httpx.HTTPError):
                await client.post(f"{url}/streams/release")


async def probe_streams(
    spec: CapacityTestSpec,
    variant: str,
    endpoints: Endpoints,
    metrics: MetricsSource,
    scrape_interval: float | None,
    record: RunRecord,
) -> None:
    """Run the probe when the workload has one: its figure into the run record, or a warning
    saying why there is none (the search runs either way)."""
    probe = spec.workload.streams
    if probe is None:
        return
    try:
        record.stream_memory.append(
            await measure_stream_memory(spec, variant, endpoints, metrics, scrape_interval)
        )
    except (StreamsProbeError, StreamMemoryError) as exc:
        record.warnings.append(f"streams probe ({variant}): no memory per stream: {exc}")
    if not probe.hold_during_steps:
        await release_streams(endpoints.generator_urls, endpoints.control_token)
