"""Connections spread over replicas of the target, and around one that is gone."""

from __future__ import annotations

import asyncio
import socket

from plimsoll.api.trial import TrialState
from tests.generator.helpers import request, run
from tests.generator.target import TargetState, start_target


async def test_load_spreads_evenly_over_replicas() -> None:
    states = [TargetState(), TargetState()]
    servers = [await start_target(state) for state in states]
    urls = [f"http://127.0.0.1:{port}" for _, port in servers]
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    try:
        result = await run(request(urls[0], workload, level=100, duration=2, replicaUrls=urls))
    finally:
        for server, _ in servers:
            server.close()
    assert result.state is TrialState.DONE
    assert result.operations["hello"].outcomes.ok == 200
    counts = [sum(state.paths.values()) for state in states]
    assert abs(counts[0] - counts[1]) <= 2, counts  # taken in turn


async def test_a_refused_replica_is_routed_around() -> None:
    state = TargetState()
    server, port = await start_target(state)
    with socket.socket() as sock:  # a replica that is gone: nobody listens there
        sock.bind(("127.0.0.1", 0))
        gone = sock.getsockname()[1]
    urls = [f"http://127.0.0.1:{port}", f"http://127.0.0.1:{gone}"]
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    try:
        result = await run(request(urls[0], workload, level=100, duration=3, replicaUrls=urls))
    finally:
        server.close()
    outcomes = result.operations["hello"].outcomes
    # The first refusal takes the replica out for the rest of the trial: the calls sent
    # to it before that refusal came back fail, the rest go to the replica that answers.
    assert 1 <= outcomes.transport <= 3, outcomes
    assert outcomes.ok == 300 - outcomes.transport


async def test_a_standby_replica_takes_no_call_until_it_listens_then_its_share() -> None:
    """An autoscaler's room to grow (issue 57): the second replica is not started when
    the trial starts, so no call goes to it (none fails); once it listens, a probe finds
    it within half a second and it takes its turn."""
    serving, standby = TargetState(), TargetState()
    server, port = await start_target(serving)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        later = sock.getsockname()[1]
    urls = [f"http://127.0.0.1:{port}", f"http://127.0.0.1:{later}"]
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}

    async def start_the_standby() -> tuple[asyncio.Server, int]:
        await asyncio.sleep(1.5)
        return await start_target(standby, port=later)

    starting = asyncio.create_task(start_the_standby())
    trial = request(urls[0], workload, level=100, duration=4, replicaUrls=urls, servingReplicas=1)
    try:
        result = await run(trial)
    finally:
        server.close()
        late_server, _ = await starting
        late_server.close()
    outcomes = result.operations["hello"].outcomes
    assert outcomes.transport == 0, outcomes
    assert outcomes.ok == 400
    taken = sum(standby.paths.values())
    # started 1.5 s into 4 s: about half of the last 2.5 s at 100/s, less the probe's wait
    assert 90 <= taken <= 130, taken
