"""The control API: in-process for the single-worker path, a real process for two workers."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from plimsoll.api.trial import CONTROL_TOKEN_HEADER, TrialResult, TrialState
from plimsoll_generator.control import ControlProtocol, Trials
from plimsoll_generator.metrics import Metrics
from plimsoll_generator.workers import InProcess
from tests.generator.helpers import TEST_TOKEN, generator_process
from tests.generator.target import TargetState


def body(url: str, **fields: Any) -> dict[str, Any]:
    trial: dict[str, Any] = {
        "level": 100,
        "duration": 1,
        "targetUrl": url,
        "workload": {"mix": [{"name": "hello"}], "arrival": "uniform"},
    }
    trial.update(fields)
    return trial


@pytest.fixture
async def control() -> AsyncIterator[httpx.AsyncClient]:
    trials = Trials(InProcess(), Metrics(1))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: ControlProtocol(trials, TEST_TOKEN), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    headers = {CONTROL_TOKEN_HEADER: TEST_TOKEN}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=30, headers=headers
    ) as client:
        yield client
    if trials.current is not None:  # never leave a trial running past its test
        await trials.abort(trials.current[0])
    server.close()


async def wait_done(client: httpx.AsyncClient, trial_id: str) -> TrialResult:
    for _ in range(200):
        result = TrialResult.model_validate((await client.get(f"/trials/{trial_id}")).json())
        if result.state is not TrialState.RUNNING:
            return result
        await asyncio.sleep(0.1)
    raise AssertionError("the trial did not end")


async def test_a_trial_runs_and_reports(
    control: httpx.AsyncClient, target: tuple[TargetState, str]
) -> None:
    _, url = target
    assert (await control.get("/healthz")).status_code == 200
    answer = await control.post("/trials", json=body(url))
    assert answer.status_code == 202
    result = await wait_done(control, answer.json()["id"])
    assert result.state is TrialState.DONE
    assert result.operations["hello"].outcomes.ok == 100
    metrics = (await control.get("/metrics")).text
    assert 'plimsoll_generator_trials_total{state="done"} 1' in metrics


async def test_an_invalid_request_gets_422_naming_the_field(control: httpx.AsyncClient) -> None:
    answer = await control.post("/trials", json=body("ftp://nowhere", duration=-1))
    assert answer.status_code == 422
    fields = {item["field"] for item in answer.json()["fields"]}
    assert fields == {"duration", "targetUrl"}
    assert "duration" in answer.json()["error"]


async def test_a_second_trial_gets_409_and_abort_returns_the_partial_result(
    control: httpx.AsyncClient, target: tuple[TargetState, str]
) -> None:
    _, url = target
    first = await control.post("/trials", json=body(url, duration=60))
    assert first.status_code == 202
    second = await control.post("/trials", json=body(url))
    assert second.status_code == 409
    await asyncio.sleep(1.0)
    aborted = await control.delete(f"/trials/{first.json()['id']}")
    result = TrialResult.model_validate(aborted.json())
    assert result.state is TrialState.ABORTED
    assert 0 < result.measured_seconds < 10
    assert result.sent > 0
    third = await control.post("/trials", json=body(url))
    assert third.status_code == 202
    assert (await control.delete(f"/trials/{third.json()['id']}")).status_code == 200


async def test_an_unknown_trial_is_404(control: httpx.AsyncClient) -> None:
    assert (await control.get("/trials/nope")).status_code == 404


@pytest.fixture
def two_workers() -> Iterator[str]:
    with generator_process(2) as url:
        yield url


async def test_two_worker_processes_split_the_level_and_merge(
    two_workers: str, target: tuple[TargetState, str]
) -> None:
    state, url = target
    headers = {CONTROL_TOKEN_HEADER: TEST_TOKEN}
    async with httpx.AsyncClient(base_url=two_workers, timeout=30, headers=headers) as client:
        answer = await client.post("/trials", json=body(url, level=101, duration=2))
        assert answer.status_code == 202
        result = await wait_done(client, answer.json()["id"])
    assert result.state is TrialState.DONE, result.errors
    assert result.generators == 2
    assert result.cores == 2
    # 101/s split as 50.5 + 50.5 over 2 s: exactly 202 starts, none lost to rounding.
    assert result.intended == 202
    assert result.operations["hello"].outcomes.ok == 202
    assert state.paths["/"] == 202


async def _slices_at(
    client: httpx.AsyncClient, trial_id: str, since: float, after: float
) -> TrialResult:
    await asyncio.sleep(after)
    answer = await client.get(f"/trials/{trial_id}/since/{since}")
    assert answer.status_code == 200, answer.text
    return TrialResult.model_validate(answer.json())


async def test_mid_trial_the_slices_so_far_are_there_on_asking(
    control: httpx.AsyncClient, target: tuple[TargetState, str]
) -> None:
    """The live view's path: while the trial runs, `/since/{seconds}` answers with the
    slices cut from that second on; a plain poll stays a stub; the warm-up has none."""
    _, url = target
    answer = await control.post("/trials", json=body(url, duration=4, warmUp=0.5))
    trial_id = answer.json()["id"]
    warming = await _slices_at(control, trial_id, 0, 0.2)
    assert warming.state is TrialState.RUNNING
    assert warming.timeline == []  # nothing measured in the warm-up
    running = await _slices_at(control, trial_id, 0, 1.8)  # ~1.5 s into the window
    assert running.state is TrialState.RUNNING
    starts = [s.start for s in running.timeline]
    assert starts == [float(i) for i in range(len(starts))]  # each second cut, in order
    assert 1 <= len(starts) <= 3  # the host is shared: a second or so either way
    first = running.timeline[0]
    assert first.seconds == 1.0
    assert 95 <= first.sent <= 105  # 100/s, uniform
    assert first.latency is not None
    later = await _slices_at(control, trial_id, len(starts), 1.2)
    assert later.timeline  # a second more was cut since
    assert all(s.start >= len(starts) for s in later.timeline)  # only from there on
    plain = TrialResult.model_validate((await control.get(f"/trials/{trial_id}")).json())
    assert plain.state is TrialState.RUNNING
    assert plain.timeline == []  # a plain poll carries no slices: it stays small
    assert (await control.get(f"/trials/{trial_id}/since/soon")).status_code == 400
    assert (await control.delete(f"/trials/{trial_id}/since/0")).status_code == 405
    done = await wait_done(control, trial_id)
    assert done.state is TrialState.DONE
    assert len(done.timeline) == 4


async def test_two_worker_processes_send_their_slices_side_by_side(
    two_workers: str, target: tuple[TargetState, str]
) -> None:
    _, url = target
    headers = {CONTROL_TOKEN_HEADER: TEST_TOKEN}
    async with httpx.AsyncClient(base_url=two_workers, timeout=30, headers=headers) as client:
        answer = await client.post("/trials", json=body(url, level=100, duration=4))
        trial_id = answer.json()["id"]
        running = await _slices_at(client, trial_id, 0, 2.6)
        await wait_done(client, trial_id)
    assert running.state is TrialState.RUNNING
    starts = [s.start for s in running.timeline]
    # Each process's slices, as many from each as the slower has cut: pairs per second.
    assert len(starts) >= 2
    assert set(Counter(starts).values()) == {2}  # one slice of each process per second
    per_second = sum(s.sent for s in running.timeline if s.start == 0.0)
    assert 95 <= per_second <= 105  # the two halves of 100/s
