"""A trial's timeline against a tiny target on 127.0.0.1: the slices add up to the
whole, and a pause shows in the slice it happened in."""

from __future__ import annotations

from plimsoll.api.trial import TrialState
from plimsoll.shared import histogram
from plimsoll.shared.timeline import points
from tests.generator.helpers import request, run
from tests.generator.target import TargetState


async def test_slices_add_up_to_the_whole_trial(target: tuple[TargetState, str]) -> None:
    _, url = target
    workload = {"mix": [{"name": "hello"}, {"name": "other", "path": "/other"}]}
    result = await run(request(url, workload, level=200, duration=3, sliceSeconds=0.5))
    assert result.state is TrialState.DONE
    timeline = result.timeline
    assert [s.start for s in timeline] == [0.5 * k for k in range(6)]
    assert all(s.seconds == 0.5 for s in timeline)
    # Every answer is in exactly one slice, and the slices' histograms merge to the whole.
    whole = histogram.merge(op.latency for op in result.operations.values())
    slices = histogram.merge(s.latency for s in timeline)
    assert histogram.count(slices) == histogram.count(whole) > 0
    for quantile in (0.5, 0.99, 1.0):
        assert histogram.quantile_ms(slices, quantile) == histogram.quantile_ms(whole, quantile)
    assert sum(s.sent for s in timeline) == result.sent
    assert sum(s.ok for s in timeline) == sum(op.outcomes.ok for op in result.operations.values())
    for point in points(timeline):
        assert 150 < point.rate < 250  # 200 requests/s, Poisson


async def test_a_pause_shows_in_its_slice_and_not_in_the_others(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    # One 0.6 s pause from 0.2 s into the trial (the last 0.6 s of a 10 s period): the
    # calls it held are answered at 0.8 s, inside the first slice; the next is 10 s away.
    state.stall_every, state.stall_for = 10.0, 0.6
    state.started -= 9.2
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    result = await run(request(url, workload, level=100, duration=4))
    series = [p.p99_ms for p in points(result.timeline)]
    assert len(series) == 4
    assert series[0] is not None
    assert series[0] > 300
    assert all(v is not None and v < 100 for v in series[1:])


async def test_errors_are_counted_in_the_slice_they_ended_in() -> None:
    import socket

    with socket.socket() as sock:  # nobody listens: every call is refused at once
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    result = await run(request(f"http://127.0.0.1:{port}", workload, level=50, duration=2))
    # 50 a second each; a start due on the boundary may land on either side of the cut.
    errors = [s.errors for s in result.timeline]
    assert sum(errors) == 100
    assert all(48 <= e <= 52 for e in errors), errors
    assert all(s.latency is None and s.ok == 0 for s in result.timeline)
