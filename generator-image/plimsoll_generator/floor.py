"""The direct-call floor: a low-rate probe of the mock that bypasses the target, from a
process of its own.

Runs beside every trial (`trial.py`) at `FloorProbe.rate`, with the same open-model
timing as the load (latency from the intended start). If the floor is slow, the host
stalled, and the runner judges the step noisy instead of blaming the target.

The prober runs in a child process (`FloorProcess`), not on the generator's event loop:
there it measured the generator's own loop as well. The edge example at 3,200
requests/s with 2,000 held streams (2026-12-07) saw the floor's p99 rise from 1.4 ms to
7 ms with the host half idle and no other program on it: the load's callbacks and the
GIL (a 5 ms switch interval) held the probe's answers, so each step at that level was
called noisy and the search never ended. The generator's own lateness is judged by its
own signals (start lag, CPU wait); the floor is the host's: the time to schedule a
waking process and cross loopback.

The child answers `READY` once it is imported; the generator starts it before it
listens for trials, so its start-up is in no trial's window. For each trial it reads a
`FloorOrder` line on its standard input, probes over the order's window (wall-clock
times: the parent's monotonic clock is not the child's to read) and writes a
`FloorResult` line. It exits when its standard input closes, so it never outlives the
generator.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

from plimsoll.api.base import PlimsollModel
from plimsoll.api.trial import FloorProbe, FloorResult
from plimsoll_generator.client import Exchange, Pool, build_request, split_url
from plimsoll_generator.recorder import Series
from plimsoll_generator.tls import context_for

READY = "floor ready"
START_LIMIT = 10.0  # seconds for the child to import and say READY before it is dropped
ANSWER_GRACE = 5.0  # seconds past the window (and the probe's timeout) for its answer


class FloorOrder(PlimsollModel):
    """What the generator asks of its floor process: the probe, and the window to record,
    in wall-clock seconds."""

    probe: FloorProbe
    timeout: float
    verify: bool = True
    measure_from: float
    end: float


class FloorProber:
    def __init__(self, probe: FloorProbe, timeout: float, verify: bool = True) -> None:
        host, port, path = split_url(probe.url)
        self.interval = 1.0 / probe.rate
        self.pool = Pool(host, port, context_for(probe.url, verify))
        self.payload = build_request("GET", path or "/", f"{host}:{port}")
        self.timeout = min(timeout, 10.0)
        self.series = Series()
        self.count = 0
        self.errors = 0
        self.recorded_sent = 0  # probes sent inside the window, each answered or failed

    async def run(self, measure_from: float, end: float) -> None:
        next_at = time.perf_counter()
        while next_at < end:
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            self._send(next_at, next_at >= measure_from)
            next_at += self.interval
        # The last answers arrive within the probe's timeout.
        deadline = time.perf_counter() + self.timeout
        while self.count + self.errors < self.recorded_sent and time.perf_counter() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)

    def _send(self, intended: float, record: bool) -> None:
        def done(exchange: Exchange) -> None:
            if not record:
                return
            if exchange.error is not None or not 200 <= exchange.status < 300:
                self.errors += 1
                return
            self.count += 1
            self.series.add(time.perf_counter() - intended)

        if record:
            self.recorded_sent += 1
        self.pool.send(self.payload, Exchange(done, timeout=self.timeout))

    def close(self) -> None:
        self.pool.close()

    def result(self) -> FloorResult:
        return FloorResult(
            latency=self.series.encoded() if self.series.count() else None,
            count=self.count,
            errors=self.errors,
        )


class FloorProcess:
    """The generator's floor process: started once, before the first trial (`start`),
    asked once per trial (`probe`), and started again by the next trial when one had to
    stop it (an abort, a probe that never answered, a child that died).

    Started per trial, the child's interpreter start-up (0.23 CPU-seconds on the 2-core
    test VM) fell inside the trial's window, in the generator pod's own cgroup: a
    generator pod held to a twentieth of a CPU spent most of a 3 s trial's quota on it
    and looked saturated at every level."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self._starting = asyncio.Lock()

    async def start(self) -> bool:
        """Whether the child is running and said READY (started now if it was not); a
        child that did not say READY within START_LIMIT is stopped."""
        async with self._starting:
            if self.process is not None and self.process.returncode is None:
                return True
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "plimsoll_generator.floor",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert self.process.stdout is not None
            try:
                line = await asyncio.wait_for(self.process.stdout.readline(), START_LIMIT)
            except TimeoutError:
                line = b""
            if line.decode().strip() == READY:
                return True
        await self.stop()
        return False

    async def probe(self, order: FloorOrder) -> FloorResult:
        """Send the order and wait for the child's answer; an empty result if none came
        (the child is then stopped: its next answer would be this order's, too late)."""
        if self.process is None or self.process.returncode is not None:
            return FloorResult()
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        try:
            self.process.stdin.write(order.model_dump_json().encode() + b"\n")
            await self.process.stdin.drain()
            wait = order.end - time.time() + order.timeout + ANSWER_GRACE
            line = await asyncio.wait_for(self.process.stdout.readline(), max(wait, 0.1))
            if line:
                return FloorResult.model_validate_json(line)
        except (TimeoutError, ConnectionError, ValueError):
            pass
        await self.stop()
        return FloorResult()

    async def stop(self) -> None:
        """End the child, and reap it (an unreaped child's pipes outlive the trial)."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await process.wait()


def on_monotonic(wall: float) -> float:
    """A wall-clock time on this process's `perf_counter`."""
    return time.perf_counter() + (wall - time.time())


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print(READY, flush=True)
    # One order per trial, until the generator closes the pipe (or goes away).
    while line := await reader.readline():
        order = FloorOrder.model_validate_json(line)
        prober = FloorProber(order.probe, order.timeout, order.verify)
        try:
            await prober.run(on_monotonic(order.measure_from), on_monotonic(order.end))
        finally:
            prober.close()
        print(prober.result().model_dump_json(), flush=True)


if __name__ == "__main__":
    asyncio.run(_serve())
