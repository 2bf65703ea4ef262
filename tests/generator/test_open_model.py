"""The open model against a tiny target on 127.0.0.1: real sockets, short trials."""

from __future__ import annotations

import socket

import pytest

from plimsoll.api.trial import TrialState
from plimsoll.shared import histogram
from plimsoll_generator import open_model
from plimsoll_generator.context import TrialContext
from plimsoll_generator.recorder import Recorder
from tests.generator.helpers import p, request, run
from tests.generator.target import TargetState


async def test_a_pausing_target_shows_its_pause_in_p99(target: tuple[TargetState, str]) -> None:
    state, url = target
    state.stall_every, state.stall_for = 2.0, 0.6  # 30% of the time stalled
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    result = await run(request(url, workload, level=200, duration=4))
    assert result.state is TrialState.DONE
    # Starts keep coming during the stall and wait it out: the pause is in the tail.
    assert p(result, "hello", 0.99) > 300
    assert p(result, "hello", 0.50) < 100
    assert result.intended == 800
    assert result.sent == result.intended - result.dropped_starts


async def test_a_closed_loop_would_hide_the_same_pause(target: tuple[TargetState, str]) -> None:
    state, url = target
    state.stall_every, state.stall_for = 2.0, 0.6
    workload = {"model": "users", "mix": [{"name": "hello"}]}
    result = await run(request(url, workload, level=2, duration=4))
    # Two users wait in the stall with one request each: a handful of slow samples
    # among thousands of fast ones, so p99 stays far below the pause.
    assert p(result, "hello", 0.99) < 300
    assert result.operations["hello"].outcomes.ok > 1000


async def test_starts_over_the_in_flight_cap_are_dropped_and_counted(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    state.stall_every, state.stall_for = 10.0, 9.0
    state.started -= 1.5  # inside the stall from the first request on
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform", "maxInFlight": 5, "timeout": "2s"}
    result = await run(request(url, workload, level=100, duration=1))
    assert result.intended == 100
    assert result.dropped_starts == 95
    assert result.sent == 5
    assert result.operations["hello"].outcomes.transport == 5  # timed out in the stall


async def test_added_latency_subtracts_the_upstream_server_timing(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    state.upstream_ms = 0.5
    workload = {"mix": [{"name": "hello"}]}
    result = await run(request(url, workload, level=100, duration=1))
    op = result.operations["hello"]
    assert op.added is not None
    added = histogram.decode(op.added)
    total = histogram.decode(op.latency)
    assert histogram.count(added) == histogram.count(total) == op.outcomes.ok
    assert histogram.quantile_ms(added, 0.5) < histogram.quantile_ms(total, 0.5)  # type: ignore[operator]


async def test_each_closed_loop_user_keeps_its_connection_and_its_upstream_timing(
    target: tuple[TargetState, str],
) -> None:
    # A user's next request goes out on the connection its answer just freed (the
    # closed loop's short cut past the pool): three users, three connections, however
    # many requests, and each answer's Server-Timing still read on the way.
    state, url = target
    state.upstream_ms = 0.5
    workload = {"model": "users", "mix": [{"name": "hello"}]}
    result = await run(request(url, workload, level=3, duration=1))
    op = result.operations["hello"]
    assert op.outcomes.ok > 100
    assert result.sent == result.intended == op.outcomes.ok
    assert len({conn for _, conn, _ in state.arrivals}) == 3
    assert op.added is not None
    assert histogram.count(histogram.decode(op.added)) == op.outcomes.ok


async def test_refused_connections_are_transport_errors_not_a_crash() -> None:
    with socket.socket() as sock:  # a port that nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    result = await run(request(f"http://127.0.0.1:{port}", workload, level=50, duration=1))
    assert result.state is TrialState.DONE
    outcomes = result.operations["hello"].outcomes
    assert outcomes.transport == 50
    assert outcomes.ok == 0
    assert any("connect" in e for e in result.errors)


async def test_429_and_503_count_as_shed_load(target: tuple[TargetState, str]) -> None:
    _, url = target
    workload = {"mix": [{"name": "busy", "path": "/busy"}, {"name": "hello"}]}
    result = await run(request(url, workload, level=100, duration=1))
    assert result.operations["busy"].outcomes.shed > 0
    assert result.operations["busy"].outcomes.ok == 0
    assert result.operations["hello"].outcomes.ok > 0


async def test_the_floor_probe_reports_its_own_histogram(target: tuple[TargetState, str]) -> None:
    _, url = target
    workload = {"mix": [{"name": "hello"}]}
    result = await run(
        request(url, workload, level=10, duration=1, floor={"url": url + "/floor", "rate": 50})
    )
    assert result.floor is not None
    assert result.floor.count == 50
    assert result.floor.latency is not None


async def test_an_abort_returns_the_partial_result(target: tuple[TargetState, str]) -> None:
    _, url = target
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    result = await run(request(url, workload, level=100, duration=30), abort_after=1.0)
    assert result.state is TrialState.ABORTED
    assert 0.5 < result.measured_seconds < 5
    assert 50 < result.sent < 500


async def test_each_early_start_in_a_burst_counts_from_its_own_send(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One wake-up sends every start due within LEAD. Sending takes time, so the clock is
    # read at each send: a start's latency must not include the sends before it.
    clock = iter(float(n) * 1e-4 for n in range(1_000_000))  # 0.1 ms a read
    monkeypatch.setattr(open_model, "_perf", lambda: next(clock))
    req = request("http://127.0.0.1:9", {"mix": [{"name": "hello"}], "arrival": "uniform"})
    ctx = TrialContext.create(req.model_copy(update={"level": 1000.0}), Recorder(["hello"]))
    ctx.t0 = ctx.measure_from = 0.0
    ctx.end = 10.0
    sent: list[open_model.TimedExchange] = []
    monkeypatch.setattr(ctx.pool, "send", lambda payload, exchange: sent.append(exchange))
    driver = open_model.OpenModel(ctx, 1000.0)
    try:
        driver._tick()  # at 0.0: the starts due in [0, LEAD), one every ms
    finally:
        driver.stop()
        ctx.one_pool().close()
    assert len(sent) > 1
    starts = [exchange.start for exchange in sent]
    assert starts == sorted(set(starts))  # none shares the wake-up's clock read
    # Each counts from its intended start or its own send, whichever came first.
    assert all(exchange.start <= exchange.sent_at for exchange in sent)
    assert sum(exchange.start == exchange.sent_at for exchange in sent) >= len(sent) - 1
