"""The plain-HTTP request mix: weighted operations turned into request bytes.

Built once per trial; `choose` picks an operation by weight and `payload`
returns its bytes. Requests without a body template or client address are
encoded once; the others are assembled per request from precomputed parts.
"""

from __future__ import annotations

import bisect
import itertools
import random

from plimsoll.api.workload import Operation
from plimsoll_generator.client import build_request
from plimsoll_generator.clientips import ClientIpPool


class MixEntry:
    __slots__ = ("counter", "expected", "name", "operation", "static")

    def __init__(self, operation: Operation, static: bytes | None) -> None:
        self.operation = operation
        self.name = operation.name
        self.expected = frozenset(operation.expect_status)
        self.static = static
        self.counter = 0


class HttpMix:
    def __init__(
        self,
        operations: list[Operation],
        host: str,
        path_of: dict[str, str],
        ips: ClientIpPool | None,
    ) -> None:
        self.host = host
        self.ips = ips
        self.path_of = path_of
        self.entries = []
        for op in operations:
            templated = op.body is not None and "{{n}}" in op.body
            static = None
            if ips is None and not templated:
                body = op.body.encode() if op.body is not None else None
                static = build_request(op.method, path_of[op.name], host, op.headers, body)
            self.entries.append(MixEntry(op, static))
        self.cumulative = list(itertools.accumulate(op.weight for op in operations))
        self.total = self.cumulative[-1]

    def choose(self, rng: random.Random) -> MixEntry:
        if len(self.entries) == 1:
            return self.entries[0]
        return self.entries[bisect.bisect_left(self.cumulative, rng.random() * self.total)]

    def payload(self, entry: MixEntry, ip_index: int = 0) -> bytes:
        if entry.static is not None:
            return entry.static
        op = entry.operation
        entry.counter += 1
        headers = dict(op.headers)
        if self.ips is not None:
            headers[self.ips.header] = self.ips.for_index(ip_index)
        body = None
        if op.body is not None:
            body = op.body.replace("{{n}}", str(entry.counter)).encode()
        return build_request(op.method, self.path_of[op.name], self.host, headers, body)
