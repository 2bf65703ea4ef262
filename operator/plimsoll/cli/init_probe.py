"""The short probe `plimsoll init` measures a service with before it writes a spec.

A closed loop of a few connections sends one request after another for a few
seconds (after a short warm-up that is not counted) and keeps each answer's
latency; `plimsoll.decide.scaffold` turns the figures into a start level and a
bar. For `--command` it also starts the service (and stops it, with everything it
forked, in its own process group) so the probe has something to measure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections import Counter
from pathlib import Path

import httpx

from plimsoll.decide.scaffold import ProbeFigures

WARM_UP_S = 0.5
OK_STATUSES = range(200, 400)


class ProbeError(RuntimeError):
    """The service could not be probed (not answering, failing); the message says what to do."""


async def probe(url: str, seconds: float, connections: int = 4) -> tuple[ProbeFigures, list[int]]:
    """GET `url` over `connections` connections for `seconds` (after the warm-up): the
    figures, and the statuses the service answered with (all of them 2xx or 3xx)."""
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    answered: set[int] = set()
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=10.0) as client:
        try:
            first = await client.get(url)
        except httpx.HTTPError as exc:
            raise ProbeError(f"{url} did not answer: {type(exc).__name__}: {exc}") from exc
        if first.status_code not in OK_STATUSES:
            raise ProbeError(
                f"GET {url} answered {first.status_code}: give the URL of a request that "
                "succeeds (e.g. its /healthz or a page), so the bar measures real answers"
            )
        started = time.perf_counter()
        measure_from = started + WARM_UP_S
        ends = measure_from + seconds

        async def loop() -> None:
            while (sent := time.perf_counter()) < ends:
                try:
                    answer = await client.get(url)
                    outcome = str(answer.status_code)
                except httpx.HTTPError as exc:
                    outcome = type(exc).__name__
                done = time.perf_counter()
                if sent < measure_from:
                    continue
                if outcome.isdigit() and int(outcome) in OK_STATUSES:
                    latencies.append(done - sent)
                    answered.add(int(outcome))
                else:
                    statuses[outcome] += 1

        await asyncio.gather(*(loop() for _ in range(connections)))
    failures = sum(statuses.values())
    if failures:
        seen = ", ".join(f"{what} ×{count}" for what, count in statuses.most_common())
        raise ProbeError(
            f"GET {url}: {failures} of {failures + len(latencies)} answers failed ({seen}) "
            "at a few connections: fix the service or the URL before measuring a ceiling"
        )
    if not latencies:
        raise ProbeError(f"GET {url}: no answer within the {seconds:g}s probe")
    return ProbeFigures(latencies, failures, seconds, connections), sorted(answered)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class StartedCommand:
    """The service `--command` names, started for the probe in its own process group."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.argv, self.env, self.log = argv, env, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, port: int, within: float) -> None:
        """Start it and wait until `port` accepts connections, or raise `ProbeError`."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as out:
            try:
                self.process = subprocess.Popen(
                    self.argv, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True,
                )  # fmt: skip
            except OSError as exc:
                raise ProbeError(f"--command {self.argv[0]!r} could not start: {exc}") from exc
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ProbeError(
                    f"--command exited (code {self.process.returncode}) before it listened on "
                    f"port {port}; its output:\n{self._tail()}"
                )
            if _listening(port):
                return
            time.sleep(0.1)
        raise ProbeError(
            f"--command did not listen on port {port} within {within:g}s: give the port it "
            f"listens on (--port), or the variable it reads it from (--port-env); its "
            f"output:\n{self._tail()}"
        )

    def _tail(self) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-10:])
        return ""

    def stop(self) -> None:
        """Stop it and everything it forked (its process group)."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)
