"""The direct-call floor: a low-rate probe of the mock that bypasses the target.

Runs beside every trial (`trial.py`) at `FloorProbe.rate`, on its own pool, with
the same open-model timing as the load (latency from the intended start). If the
floor is slow, the host stalled, and the runner judges the step noisy instead of
blaming the target.
"""

from __future__ import annotations

import asyncio
import time

from plimsoll.api.trial import FloorProbe, FloorResult
from plimsoll_generator.client import Exchange, Pool, build_request, split_url
from plimsoll_generator.recorder import Series
from plimsoll_generator.tls import context_for


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

    async def run(self, measure_from: float, end: float) -> None:
        next_at = time.perf_counter()
        while next_at < end:
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            self._send(next_at, next_at >= measure_from)
            next_at += self.interval

    def _send(self, intended: float, record: bool) -> None:
        def done(exchange: Exchange) -> None:
            if not record:
                return
            if exchange.error is not None or not 200 <= exchange.status < 300:
                self.errors += 1
                return
            self.count += 1
            self.series.add(time.perf_counter() - intended)

        self.pool.send(self.payload, Exchange(done, timeout=self.timeout))

    def close(self) -> None:
        self.pool.close()

    def result(self) -> FloorResult:
        return FloorResult(
            latency=self.series.encoded() if self.series.count() else None,
            count=self.count,
            errors=self.errors,
        )
