"""The replay schedule source: a log's requests in start order, as offsets of a trial.

Used by `replay.ReplayDriver`. `ordered` puts the records of a log back in
start order within a bounded window (a proxy writes a request's line when it
ends), `LogArrivals` loops the log and keeps this process's part of the
clients, and `ReplaySchedule` is the open model's `Schedule` over them: offsets
are the logged offsets divided by the speed, so `pacing.Pacer` paces and
counts a replay exactly as it does a Poisson schedule. Each offset is a
`ReplayStart`, a float that carries its record to the driver.
Reading is lazy: a log larger than memory streams, one window at a time.
"""

from __future__ import annotations

import heapq
import itertools
import math
import zlib
from collections.abc import Callable, Iterable, Iterator

from plimsoll.shared.accesslog import LogRecord
from plimsoll_generator.schedule import Schedule


class ReplayStart(float):
    """An intended start offset (seconds from the trial start) with the request to send."""

    record: LogRecord

    def __new__(cls, offset: float, record: LogRecord) -> ReplayStart:
        start = super().__new__(cls, offset)
        start.record = record
        return start


def client_hash(client: str) -> int:
    """A stable number per client (the same in every process and every run)."""
    return zlib.crc32(client.encode())


def ordered(records: Iterable[LogRecord], window: float) -> Iterator[LogRecord]:
    """`records` in start order, assuming no request outlasted `window` seconds."""
    heap: list[tuple[float, int, LogRecord]] = []
    counter = itertools.count()
    for record in records:
        heapq.heappush(heap, (record.start, next(counter), record))
        written = record.start + (record.duration or 0.0)
        while heap and heap[0][0] <= written - window:
            yield heapq.heappop(heap)[2]
    while heap:
        yield heapq.heappop(heap)[2]


class LogArrivals:
    """(seconds since the log's first start, record) of this part's clients, looped.

    `open_log` returns a fresh iterator over the log's records each time it is
    called (once per pass). Each pass is shifted by the log's span plus its mean
    gap, so a loop neither doubles up nor pauses at the seam.
    """

    def __init__(
        self,
        open_log: Callable[[], Iterable[LogRecord]],
        *,
        window: float,
        part: int = 0,
        parts: int = 1,
        loop: bool = True,
    ) -> None:
        self.open_log = open_log
        self.window = window
        self.part = part
        self.parts = parts
        self.loop = loop

    def __iter__(self) -> Iterator[tuple[float, LogRecord]]:
        shift = 0.0
        while True:
            origin: float | None = None
            last = 0.0
            count = 0
            for record in ordered(self.open_log(), self.window):
                if origin is None:
                    origin = record.start
                last = record.start
                count += 1
                if client_hash(record.client) % self.parts == self.part:
                    yield shift + max(record.start - origin, 0.0), record
            if origin is None or not self.loop:
                return
            span = last - origin
            shift += span + (span / (count - 1) if count > 1 else 1.0)


class ReplaySchedule(Schedule):
    """The open model's schedule over a log: intended starts at the log's offsets ÷ speed."""

    def __init__(self, arrivals: Iterable[tuple[float, LogRecord]], speed: float) -> None:
        if speed < 0:
            raise ValueError("a replay speed cannot be negative")
        self.speed = speed
        self.count = 0
        self.source = iter(arrivals) if speed > 0 else iter(())
        self.pending: ReplayStart | None = None
        self.next_time = math.inf
        self._advance()

    def _advance(self) -> None:
        for offset, record in self.source:
            self.pending = ReplayStart(offset / self.speed, record)
            self.next_time = float(self.pending)
            return
        self.pending = None
        self.next_time = math.inf

    def take_until(self, until: float, limit: int = 1_000_000) -> list[float]:
        out: list[float] = []
        while self.pending is not None and self.next_time <= until and len(out) < limit:
            out.append(self.pending)
            self.count += 1
            self._advance()
        return out
