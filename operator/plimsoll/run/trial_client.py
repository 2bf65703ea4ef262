"""Runs one trial on every generator through their HTTP control API, and merges the results.

Called by the runner for each step, on both platforms: it splits the level
across the generators exactly, `POST`s a `TrialRequest` to each, polls `GET
/trials/{id}` until every one is done, and merges their `TrialResult`s. Several
generators start together: each one's clock is read first (`GET /clock`), one whose
clock is off by more than 50 ms is refused (`plimsoll.decide.clock`), and every
request names the same start time on its generator's own clock. A
generator that crashes, answers garbage or fails its trial makes the whole
trial fail with `TrialFailedError` (the step is then judged invalid): the others are
aborted so they stop loading the target. Given `on_progress`, each poll asks for the
timeline slices cut since the last one (`GET /trials/{id}/since/{seconds}`) and hands
it the slices newly covered, up to the second every generator has reached: the live
view's figures mid-trial, each slice handed on once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from pydantic import ValidationError

from plimsoll.api.timeline import TimelineSlice
from plimsoll.api.trial import (
    CONTROL_TOKEN_HEADER,
    ClockReading,
    TrialAccepted,
    TrialRequest,
    TrialResult,
    TrialState,
)
from plimsoll.decide.clock import (
    ClockOffset,
    ClockSample,
    offset_of,
    refusal,
    start_lead,
    start_on_their_clock,
)
from plimsoll.shared.load_split import split_request
from plimsoll.shared.results import merge_results

_POLL_INTERVAL = 0.25
_GRACE = 30.0  # beyond warm-up + duration, for generators to drain and report


_CLOCK_READINGS = 5  # per generator; the one with the shortest round trip is kept


class TrialFailedError(RuntimeError):
    """The trial produced no trustworthy client-side result; the message says why."""


class ClockSkewError(TrialFailedError):
    """A generator's clock is too far from the runner's to start the trial with the others."""


# A trial result is a few encoded histograms: kilobytes to a few MiB at most. A bigger
# answer is a broken or hostile generator, not something to hold in memory.
MAX_ANSWER_BYTES = 32 * 2**20


class AnswerTooLargeError(ValueError):
    pass


async def _call(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any) -> bytes:
    """The answer's body, read at most `MAX_ANSWER_BYTES` far; raises on an HTTP error."""
    async with client.stream(method, url, **kwargs) as response:
        response.raise_for_status()
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                raise AnswerTooLargeError(
                    f"answer larger than {MAX_ANSWER_BYTES // 2**20} MiB: refused"
                )
        return bytes(body)


async def _start(client: httpx.AsyncClient, url: str, request: TrialRequest) -> str:
    try:
        answer = await _call(client, "POST", f"{url}/trials", json=request.to_wire())
        return TrialAccepted.model_validate_json(answer).id
    except (httpx.HTTPError, ValidationError, ValueError) as exc:
        raise TrialFailedError(f"generator {url} did not accept the trial: {exc}") from exc


async def _clock(client: httpx.AsyncClient, url: str) -> ClockOffset:
    samples = []
    for _ in range(_CLOCK_READINGS):
        sent = time.time()
        try:
            reading = ClockReading.model_validate_json(await _call(client, "GET", f"{url}/clock"))
        except (httpx.HTTPError, ValidationError, ValueError) as exc:
            raise TrialFailedError(f"generator {url} did not tell its clock: {exc}") from exc
        samples.append(ClockSample(sent=sent, theirs=reading.unix, received=time.time()))
    return offset_of(samples)


async def _synchronised(
    client: httpx.AsyncClient, urls: Sequence[str], parts: list[TrialRequest]
) -> tuple[list[TrialRequest], float]:
    """Each part with the one start time on its own generator's clock, and the seconds
    until then; raises ClockSkewError when a generator's clock is too far off to start
    with the others."""
    clocks = [await _clock(client, url) for url in urls]
    refused = [why for url, c in zip(urls, clocks, strict=True) if (why := refusal(url, c))]
    if refused:
        raise ClockSkewError("; ".join(refused))
    lead = start_lead(clocks)
    start_at = time.time() + lead
    timed = [
        part.model_copy(update={"start_at": start_on_their_clock(start_at, clock)})
        for part, clock in zip(parts, clocks, strict=True)
    ]
    return timed, lead


Progress = Callable[[list[TimelineSlice]], None]


class _SoFar:
    """The timeline slices each generator has reported mid-trial, handed on once every
    generator has reached their second: a second only one generator has reported yet
    would show its share alone."""

    def __init__(self, urls: Sequence[str], report: Progress) -> None:
        self.slices: dict[str, list[TimelineSlice]] = {url: [] for url in urls}
        self.handed: dict[str, int] = dict.fromkeys(urls, 0)  # slices handed on, per url
        self.asks: set[str] = set(urls)  # generators that answer /since/ (older ones: 404)
        self.report = report

    def reached(self, url: str) -> float:
        return max((s.start + s.seconds for s in self.slices[url]), default=0.0)

    def path(self, url: str, trial_id: str) -> str:
        if url not in self.asks:
            return f"{url}/trials/{trial_id}"
        # a hair early: the next slice starts exactly where the last one ended
        return f"{url}/trials/{trial_id}/since/{max(0.0, self.reached(url) - 1e-6)!r}"

    def add(self, url: str, slices: list[TimelineSlice]) -> None:
        if not slices:
            return
        self.slices[url].extend(slices)
        common = min(self.reached(u) for u in self.slices)
        new: list[TimelineSlice] = []
        for each, kept in self.slices.items():
            covered = sum(1 for s in kept if s.start + s.seconds <= common)  # time-ordered
            new += kept[self.handed[each] : covered]
            self.handed[each] = covered
        if new:
            self.report(new)


async def _poll(
    client: httpx.AsyncClient,
    url: str,
    trial_id: str,
    deadline: float,
    so_far: _SoFar | None = None,
) -> TrialResult:
    while True:
        try:
            path = so_far.path(url, trial_id) if so_far is not None else f"{url}/trials/{trial_id}"
            result = TrialResult.model_validate_json(await _call(client, "GET", path))
        except httpx.HTTPStatusError as exc:
            if so_far is None or url not in so_far.asks or exc.response.status_code != 404:
                raise TrialFailedError(
                    f"generator {url} stopped answering mid-trial: {exc}"
                ) from exc
            so_far.asks.discard(url)  # a generator from before /since/: no live figures
            continue
        except (httpx.HTTPError, ValidationError, ValueError) as exc:
            raise TrialFailedError(f"generator {url} stopped answering mid-trial: {exc}") from exc
        if result.state is TrialState.DONE:
            return result
        if result.state is TrialState.RUNNING and so_far is not None:
            so_far.add(url, result.timeline)
        if result.state in (TrialState.FAILED, TrialState.ABORTED):
            detail = "; ".join(result.errors[:3]) or "no reason given"
            raise TrialFailedError(
                f"generator {url} reports its trial {result.state.value}: {detail}"
            )
        if time.monotonic() > deadline:
            raise TrialFailedError(f"generator {url} gave no result within the trial's time")
        await asyncio.sleep(_POLL_INTERVAL)


async def _abort(client: httpx.AsyncClient, url: str, trial_id: str) -> None:
    # It may be the one that crashed; stopping the others is what matters.
    with contextlib.suppress(httpx.HTTPError):
        await client.delete(f"{url}/trials/{trial_id}")


async def run_trial(
    generator_urls: Sequence[str],
    request: TrialRequest,
    *,
    level: int,
    token: str | None = None,
    on_progress: Progress | None = None,
) -> TrialResult:
    """Run `request` at `level` split across `generator_urls` (`plimsoll.shared.load_split`,
    the rule each generator applies again to its processes); the merged result. `token`
    is the run's control token, sent with every call; `on_progress` gets the slices so far
    while the trial runs."""
    parts = split_request(request.model_copy(update={"level": level}), len(generator_urls))
    started: dict[str, str] = {}
    headers = {CONTROL_TOKEN_HEADER: token} if token else {}
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0), headers=headers) as client:
        lead = 0.0
        if len(generator_urls) > 1:  # one generator starts when it is asked: nothing to align
            parts, lead = await _synchronised(client, generator_urls, parts)
        deadline = time.monotonic() + lead + request.warm_up + request.duration + _GRACE
        try:
            for url, part in zip(generator_urls, parts, strict=True):
                started[url] = await _start(client, url, part)
            so_far = _SoFar(list(started), on_progress) if on_progress is not None else None
            polls = [_poll(client, url, tid, deadline, so_far) for url, tid in started.items()]
            results = await asyncio.gather(*polls)
        except BaseException:
            # Stop the others so a failed or cancelled trial leaves no load behind.
            await asyncio.shield(
                asyncio.gather(*(_abort(client, u, t) for u, t in started.items()))
            )
            raise
    return merge_results(results, trial_id=",".join(started.values()))
