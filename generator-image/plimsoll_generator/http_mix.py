"""The plain-HTTP request mix: weighted operations turned into request bytes.

Built once per trial; `choose` picks an operation by weight and `payload`
returns its bytes. Requests without a body template, client address or per-user
credential are encoded once (once per size, for a body size mix); the others are
assembled per request from precomputed parts. The closed loop passes each user's
index as `ip_index`, so its address and credential are that user's.
"""

from __future__ import annotations

import bisect
import itertools
import random

from plimsoll.api.credentials import Credentials
from plimsoll.api.workload import Operation
from plimsoll_generator.bodies import SizeMix, padded_json
from plimsoll_generator.client import build_request
from plimsoll_generator.client_ips import ClientIpPool


class MixEntry:
    __slots__ = ("by_size", "counter", "expected", "name", "operation", "sizes", "static")

    def __init__(self, operation: Operation, static: bytes | None) -> None:
        self.operation = operation
        self.name = operation.name
        self.expected = frozenset(operation.expect_status)
        self.static = static
        self.counter = 0
        self.sizes = SizeMix(operation.body_sizes) if operation.body_sizes else None
        self.by_size: dict[int, bytes] = {}  # whole requests per body size, when static


class HttpMix:
    def __init__(
        self,
        operations: list[Operation],
        host: str,
        path_of: dict[str, str],
        ips: ClientIpPool | None,
        rng: random.Random | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        self.host = host
        self.ips = ips
        self.credentials = credentials
        self.rng = rng or random.Random(0)  # draws body sizes
        self.path_of = path_of
        self.entries = []
        for op in operations:
            templated = op.body is not None and "{{n}}" in op.body
            static = None
            per_user = ips is not None or credentials is not None
            if not per_user and not templated and op.body_sizes is None:
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
        if entry.sizes is not None:
            return self._sized(entry, ip_index)
        op = entry.operation
        entry.counter += 1
        headers = self._headers(op, ip_index)
        body = None
        if op.body is not None:
            body = op.body.replace("{{n}}", str(entry.counter)).encode()
        return build_request(op.method, self.path_of[op.name], self.host, headers, body)

    def _sized(self, entry: MixEntry, ip_index: int) -> bytes:
        """A request whose body is a JSON object of a size drawn from the mix."""
        assert entry.sizes is not None
        op = entry.operation
        size = entry.sizes.draw(self.rng)
        if self.ips is None and self.credentials is None:
            whole = entry.by_size.get(size)
            if whole is None:
                path = self.path_of[op.name]
                whole = build_request(op.method, path, self.host, op.headers, padded_json(size))
                entry.by_size[size] = whole
            return whole
        headers = self._headers(op, ip_index)
        return build_request(
            op.method, self.path_of[op.name], self.host, headers, padded_json(size)
        )

    def _headers(self, op: Operation, index: int) -> dict[str, str]:
        """The operation's headers, with user `index`'s address and credential."""
        headers = dict(op.headers)
        if self.ips is not None:
            headers[self.ips.header] = self.ips.for_index(index)
        if self.credentials is not None:
            headers.update(self.credentials.headers_for(index))
        return headers
