"""`model: replay` against a tiny target on 127.0.0.1: a logged arrival pattern comes back
at 1x (per-second counts correlate), doubles at 2x, and each client keeps its connection."""

from __future__ import annotations

import itertools
import json
import random
import statistics
import time
from collections import Counter
from pathlib import Path

import pytest

from plimsoll.api.trial import TrialState
from plimsoll.api.workload import Workload
from plimsoll.shared.accesslog import LogRecord, Privacy
from plimsoll_generator import trial
from plimsoll_generator.context import TrialContext
from plimsoll_generator.pacing import Pacer
from plimsoll_generator.recorder import Series
from plimsoll_generator.replay_source import LogArrivals, ReplaySchedule, client_hash, ordered
from plimsoll_generator.trial import Driver
from tests.generator.helpers import request, run
from tests.generator.target import TargetState

EPOCH = 1_764_000_000.0
CLIENTS = 20
STALL = 1.0  # seconds the driver build blocks the loop in the slow-build test


def write_log(path: Path, seconds: int, seed: int = 3) -> Counter[int]:
    """An nginx JSON log whose rate swings between 15 and 110 requests/s; per-second counts."""
    rng = random.Random(seed)
    lines, counts = [], Counter[int]()
    for second in range(seconds):
        rate = 15 if (second // 2) % 2 == 0 else 110
        for _ in range(rng.randint(rate - 5, rate + 5)):
            start = second + rng.random()
            duration = rng.uniform(0.001, 0.050)
            client = rng.randrange(CLIENTS)
            counts[second] += 1
            lines.append(
                (
                    start + duration,
                    {
                        "msec": f"{EPOCH + start + duration:.3f}",
                        "remote_addr": f"10.1.0.{client}",
                        "request": f"GET /c/{client}?token=secret HTTP/1.1",
                        "status": "200",
                        "request_time": f"{duration:.3f}",
                        "body_bytes_sent": "5",
                    },
                )
            )
    lines.sort(key=lambda item: item[0])  # nginx writes a line when the request ends
    path.write_text("".join(json.dumps(body) + "\n" for _, body in lines))
    return counts


def workload(log: Path, loop: bool = False) -> dict[str, object]:
    return {
        "model": "replay",
        "mix": [{"name": "client", "path": "/c/*"}],
        "replay": {"log": str(log), "loop": loop, "reorderWindow": "1s"},
    }


def correlation(a: list[float], b: list[float]) -> float:
    return statistics.correlation(a, b)


async def test_replay_at_1x_reproduces_the_logged_per_second_counts(
    target: tuple[TargetState, str], tmp_path: Path
) -> None:
    state, url = target
    log = tmp_path / "access.json"
    logged = write_log(log, 12)
    result = await run(request(url, workload(log), level=100, duration=11, warmUp=0))
    assert result.state is TrialState.DONE, result.errors
    first = min(t for t, _, _ in state.arrivals)
    seen = Counter(int(t - first) for t, _, _ in state.arrivals)
    seconds = range(11)
    r = correlation([logged[s] for s in seconds], [seen[s] for s in seconds])
    assert r >= 0.95, (r, logged, seen)
    assert result.intended == sum(logged[s] for s in range(11)) or abs(
        result.intended - sum(logged[s] for s in range(11))
    ) <= max(logged.values())  # the last second straddles the trial's end
    assert result.sent_on_time >= 0.99 * result.intended
    # Query strings are dropped by default: the token never left the log.
    assert all("?" not in path for _, _, path in state.arrivals)


async def test_a_slow_build_does_not_make_the_first_starts_late(
    target: tuple[TargetState, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Building the drivers reads the log's first reorder window; on a busy host that took
    # long enough that the first second's starts left late in a clump (a CI run's replay
    # through nginx correlated 0.86 with its log). The trial's clock starts after the build.
    # The stall here is a whole second, so that the clump is unmistakable.
    _, url = target
    log = tmp_path / "access.json"
    write_log(log, 3)
    build = trial.build_drivers

    def slow_build(ctx: TrialContext) -> list[Driver]:
        time.sleep(STALL)  # blocks the loop, as parsing a large window does
        return build(ctx)

    monkeypatch.setattr(trial, "build_drivers", slow_build)
    result = await run(request(url, workload(log), level=100, duration=2, warmUp=0))
    assert result.state is TrialState.DONE, result.errors
    assert result.intended > 0
    # Counted against the schedule, the stall makes every start of its first second
    # late (more than lateTolerance, 100 ms): measured, 13 of 30 without the fix and 0
    # with it. A host stall of over 100 ms during the trial may still make one or two
    # late, which is the host's doing and is allowed (it asked all 30 on time before,
    # which a busy CI host need not give).
    late = result.intended - result.sent_on_time
    assert late <= 2, (late, result.intended)


async def test_replay_at_2x_doubles_the_achieved_rate(
    target: tuple[TargetState, str], tmp_path: Path
) -> None:
    _, url = target
    log = tmp_path / "access.json"
    write_log(log, 8)
    once = await run(request(url, workload(log, loop=True), level=100, duration=4, warmUp=0))
    twice = await run(request(url, workload(log, loop=True), level=200, duration=4, warmUp=0))
    assert once.state is TrialState.DONE
    assert twice.state is TrialState.DONE
    rate_1x = once.sent / once.measured_seconds
    rate_2x = twice.sent / twice.measured_seconds
    assert 1.8 <= rate_2x / rate_1x <= 2.2, (rate_1x, rate_2x)


async def test_each_client_keeps_one_connection(
    target: tuple[TargetState, str], tmp_path: Path
) -> None:
    state, url = target
    log = tmp_path / "access.json"
    write_log(log, 4)
    replay = workload(log)
    replay["replay"]["connections"] = 1000  # type: ignore[index]
    result = await run(request(url, replay, level=100, duration=4, warmUp=0))
    assert result.state is TrialState.DONE
    connections: dict[str, set[int]] = {}
    for _, conn, path in state.arrivals:
        connections.setdefault(path, set()).add(conn)
    assert len(connections) == CLIENTS
    slots = {client_hash(Privacy().client(f"10.1.0.{i}")) % 1000 for i in range(CLIENTS)}
    assert len(slots) == CLIENTS  # no two clients share a modeled connection here
    owners: dict[int, set[str]] = {}
    for path, conns in connections.items():
        for conn in conns:
            owners.setdefault(conn, set()).add(path)
    # A connection carries one client's requests only, and a client reuses its own:
    # a second one opens only while the first is busy, as a real client's would.
    assert all(len(paths) == 1 for paths in owners.values()), owners
    requests = Counter(path for _, _, path in state.arrivals)
    assert all(len(connections[p]) <= max(2, requests[p] // 5) for p in requests), connections


def _record(start: float, client: str = "a", duration: float = 0.0) -> LogRecord:
    return LogRecord(start, client, "GET", "/", 200, duration, 10, None)


def test_starts_come_back_in_start_order_within_the_window() -> None:
    # Logged as they ended: a long request (start 0, 5 s) after short ones.
    records = [_record(1.0, duration=0.1), _record(2.0, duration=0.1), _record(0.0, duration=5)]
    assert [r.start for r in ordered(records, window=10)] == [0.0, 1.0, 2.0]


def test_a_looped_log_continues_after_its_span_and_keeps_only_this_part() -> None:
    records = [_record(float(i), client=f"c{i}") for i in range(4)]
    arrivals = LogArrivals(lambda: records, window=1, loop=True)
    offsets = [offset for offset, _ in itertools.islice(arrivals, 9)]
    # The log spans 3 s with 1 s gaps: the second pass starts 1 s after the first ends.
    assert offsets == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    parts = [
        {r.client for _, r in LogArrivals(lambda: records, window=1, part=k, parts=2, loop=False)}
        for k in range(2)
    ]
    assert parts[0].isdisjoint(parts[1])
    assert parts[0] | parts[1] == {f"c{i}" for i in range(4)}


class _Counts:
    def __init__(self) -> None:
        self.intended = self.on_time = self.dropped_starts = 0
        self.start_lag = Series()


def test_a_late_start_is_sent_and_counted_late_never_skipped() -> None:
    records = [_record(float(i) / 10) for i in range(10)]
    schedule = ReplaySchedule(LogArrivals(lambda: records, window=1, loop=False), speed=2.0)
    counts = _Counts()
    pacer = Pacer(schedule, counts, measure_from=0, horizon=10, cap=1000, tolerance=0.1)
    due = pacer.due(3.0, in_flight=0)  # woke 2.5 s after the last start was due
    assert [round(offset, 3) for offset, _ in due] == [i / 20 for i in range(10)]
    assert counts.intended == 10
    assert len(due) == 10
    assert counts.on_time == 0  # all late; none dropped, none skipped
    assert pacer.next_wake(3.0) is None  # the log is done


def test_replay_needs_http_and_its_log() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="model 'replay' and 'replay' go together"):
        Workload.model_validate({"model": "replay", "mix": [{"name": "a"}]})
    with pytest.raises(ValidationError, match="use protocol 'http'"):
        Workload.model_validate(
            {
                "model": "replay",
                "protocol": "mcp",
                "mix": [{"name": "a", "kind": "call", "tool": "t"}],
                "replay": {"log": "x"},
            }
        )
