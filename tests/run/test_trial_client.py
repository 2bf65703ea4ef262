"""Several generators start a trial together, and one whose clock is off is refused.

Two real generator processes (`python -m plimsoll_generator`) load one target on
loopback: each one's first connection opens at the same start time, however long
the runner took to ask the second. A stand-in generator whose `/clock` runs 200 ms
ahead (a node whose clock is not kept) makes the runner refuse the trial before
any generator is asked to start it.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from plimsoll.api.trial import CONTROL_TOKEN_HEADER, TrialRequest, TrialState
from plimsoll.run.trial_client import ClockSkewError, run_trial
from tests.generator.helpers import TEST_TOKEN, generator_process, request
from tests.generator.target import TargetState, start_target

CLOSED = {"model": "users", "mix": [{"name": "w", "path": "/w"}]}


async def test_two_generators_open_their_first_connections_together() -> None:
    state = TargetState()
    server, port = await start_target(state)
    try:
        with generator_process(1) as first, generator_process(1) as second:
            # One user each; the runner asks the first, then the second.
            trial = request(f"http://127.0.0.1:{port}", CLOSED, level=2, duration=0.5)
            asked = time.monotonic()
            result = await run_trial([first, second], trial, level=2, token=TEST_TOKEN)
    finally:
        server.close()
    assert result.state is TrialState.DONE, result.errors
    assert result.started_late_seconds < 0.05, result.errors
    opened: dict[int, float] = {}
    for when, connection, _ in state.arrivals:
        opened.setdefault(connection, when)
    assert len(opened) == 2, opened
    one, two = sorted(opened.values())
    assert two - one < 0.050, (two - one, opened)  # the bar for "together"
    assert one - asked >= 0.4  # both waited for the start time, half a second ahead


class _SkewedClock(BaseHTTPRequestHandler):
    """A generator's control API as far as `/clock`, 200 ms ahead; records every call."""

    calls: list[str] = []

    def do_GET(self) -> None:  # the stdlib's name
        self.calls.append(f"GET {self.path}")
        body = json.dumps({"unix": time.time() + 0.2}).encode()
        self.send_response(200 if self.path == "/clock" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.calls.append(f"POST {self.path}")
        self.send_response(500)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def skewed_generator() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SkewedClock)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_generator_whose_clock_is_200_ms_ahead_is_refused_before_any_start() -> None:
    state = TargetState()
    server, port = await start_target(state)
    _SkewedClock.calls = []
    try:
        with generator_process(1) as real, skewed_generator() as skewed:
            trial: TrialRequest = request(f"http://127.0.0.1:{port}", CLOSED, duration=0.5)
            with pytest.raises(ClockSkewError) as refused:
                await run_trial([real, skewed], trial, level=2, token=TEST_TOKEN)
    finally:
        server.close()
    message = str(refused.value)
    assert message.startswith(f"generator {skewed}'s clock is 20")  # 200-odd ms
    assert "ms ahead of the runner's" in message
    assert "within 50 ms" in message
    assert real not in message  # the real generator's clock agrees
    assert not [c for c in _SkewedClock.calls if c.startswith("POST")]
    assert state.arrivals == []  # nothing was started: no load reached the target


OPEN = {"model": "rate", "arrival": "uniform", "mix": [{"name": "w", "path": "/w"}]}


async def test_mid_trial_progress_covers_the_seconds_every_generator_reached() -> None:
    """The live view's feed: while two real generators run a 3 s trial, `on_progress`
    gets each slice once, only for seconds both have cut (a pair per second), in order,
    and the final result holds them all."""
    state = TargetState()
    server, port = await start_target(state)
    seen: list[list[float]] = []
    try:
        with generator_process(1) as first, generator_process(1) as second:
            trial = request(f"http://127.0.0.1:{port}", OPEN, duration=3, warmUp=0.3)
            result = await run_trial(
                [first, second],
                trial,
                level=100,
                token=TEST_TOKEN,
                on_progress=lambda slices: seen.append([s.start for s in slices]),
            )
    finally:
        server.close()
    assert result.state is TrialState.DONE, result.errors
    assert seen, "no progress came while the trial ran"
    starts = [start for handed in seen for start in handed]
    assert set(Counter(starts).values()) == {2}, seen  # both generators, each second, once
    assert [max(h) for h in seen] == sorted(max(h) for h in seen)  # in order of time
    assert set(starts) <= {s.start for s in result.timeline}


class _WithoutSince(BaseHTTPRequestHandler):
    """A generator from before `/since/`: forwards to a real one, 404 for that path."""

    upstream = ""
    asked_since = 0

    def _forward(self, method: str) -> None:
        if "/since/" in self.path:
            type(self).asked_since += 1
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else None
        ask = urllib.request.Request(self.upstream + self.path, data=data, method=method)
        ask.add_header("Content-Type", "application/json")
        token = self.headers.get(CONTROL_TOKEN_HEADER)
        if token is not None:  # the run's token, passed on as a proxy in front would
            ask.add_header(CONTROL_TOKEN_HEADER, token)
        with urllib.request.urlopen(ask, timeout=10) as answer:
            body, status = answer.read(), answer.status
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # the stdlib's name
        self._forward("GET")

    def do_POST(self) -> None:
        self._forward("POST")

    def log_message(self, *_: object) -> None:
        pass


async def test_a_generator_without_progress_still_runs_the_trial() -> None:
    state = TargetState()
    server, port = await start_target(state)
    seen: list[int] = []
    try:
        with generator_process(1) as real:
            _WithoutSince.upstream, _WithoutSince.asked_since = real, 0
            old = ThreadingHTTPServer(("127.0.0.1", 0), _WithoutSince)
            thread = threading.Thread(target=old.serve_forever, daemon=True)
            thread.start()
            try:
                trial = request(f"http://127.0.0.1:{port}", OPEN, duration=1.5, warmUp=0.2)
                result = await run_trial(
                    [f"http://127.0.0.1:{old.server_address[1]}"],
                    trial,
                    level=50,
                    token=TEST_TOKEN,
                    on_progress=lambda slices: seen.append(len(slices)),
                )
            finally:
                old.shutdown()
                old.server_close()
    finally:
        server.close()
    assert result.state is TrialState.DONE, result.errors
    assert _WithoutSince.asked_since == 1  # asked once, then polled the plain way
    assert seen == []  # no live figures from it, and no failed trial either
    assert result.operations["w"].outcomes.ok > 0
