"""A route's answers: the error share by class and the response-size mix.

Called by `traffic.TrafficFit` for every record of a route. Errors count by
class (5xx, 4xx, timeouts: 408/499/504 or a proxy's upstream-timeout flag);
the sizes of successful answers keep a bounded sample and become a few
buckets (by octave, small octaves merged into their nearest large one), each
the median size of its members with its share as weight: "mostly a few KB, 2% around 1 MB".
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from plimsoll.decide.calibration.reservoir import Reservoir, quantile

TIMEOUT_STATUSES = (408, 499, 504)  # 499: nginx's "the client gave up waiting"
MAX_BUCKETS = 4
MIN_BUCKET_SHARE = 0.005  # an octave with less than this joins its nearest neighbour


@dataclass(frozen=True)
class ErrorFit:
    requests: int
    server: int  # 5xx, timeouts excluded
    client: int  # 4xx, 408 excluded
    timeouts: int
    server_status: int  # the most common 5xx (500 when there are none)
    client_status: int

    @property
    def failed(self) -> int:
        return self.server + self.client + self.timeouts

    def share(self, count: int) -> float:
        return count / self.requests if self.requests else 0.0


@dataclass
class ResponseTally:
    """Running counts of one route's answers."""

    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    timeouts: int = 0
    sizes: Reservoir = field(default_factory=lambda: Reservoir(50_000, seed=1))

    def add(self, status: int, bytes_sent: int | None, timed_out: bool) -> None:
        self.requests += 1
        if timed_out or status in TIMEOUT_STATUSES:
            self.timeouts += 1
        else:
            self.statuses[status] += 1
        if bytes_sent is not None and status < 400:  # an error's body is not the route's size
            self.sizes.add(float(bytes_sent))

    def errors(self) -> ErrorFit:
        server = {s: n for s, n in self.statuses.items() if s >= 500}
        client = {s: n for s, n in self.statuses.items() if 400 <= s < 500}
        return ErrorFit(
            requests=self.requests,
            server=sum(server.values()),
            client=sum(client.values()),
            timeouts=self.timeouts,
            server_status=max(server, key=lambda s: server[s]) if server else 500,
            client_status=max(client, key=lambda s: client[s]) if client else 404,
        )


def size_buckets(values: list[float]) -> list[tuple[int, float]]:
    """(bytes, share) buckets of a size sample, largest share first; [] without sizes."""
    if not values:
        return []
    octaves: dict[int, list[float]] = {}
    for value in values:
        octaves.setdefault(int(math.log2(value + 1)), []).append(value)
    total = len(values)
    ranked = sorted(octaves, key=lambda o: len(octaves[o]), reverse=True)
    kept = [o for o in ranked if len(octaves[o]) / total >= MIN_BUCKET_SHARE][:MAX_BUCKETS]
    kept = kept or ranked[:1]
    members: dict[int, list[float]] = {o: [] for o in kept}
    for octave, sizes in octaves.items():
        nearest = min(kept, key=lambda k: abs(k - octave))
        members[nearest].extend(sizes)
    buckets = [
        (max(1, round(quantile(sorted(sizes), 0.5))), len(sizes) / total)
        for sizes in members.values()
    ]
    return sorted(buckets, key=lambda b: b[1], reverse=True)
