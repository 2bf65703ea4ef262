"""One request as an access log told it, and the privacy rules applied while reading.

Built by `formats.Parser` for every line; read by the calibration accumulators
(plimsoll.decide.calibration) and the replay source. The client id is hashed
and the query string dropped here, before anything else sees the record, so
nothing downstream can leak them by mistake.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class Privacy:
    """What of a log may leave the reader. The defaults keep client ids and queries out."""

    keep_client_ids: bool = False
    keep_query: bool = False
    salt: str = "plimsoll"  # a per-site salt makes the hashes useless elsewhere
    hashed: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def client(self, raw: str) -> str:
        if self.keep_client_ids:
            return raw
        known = self.hashed.get(raw)
        if known is None:
            key = self.salt.encode()[:64]
            known = hashlib.blake2b(raw.encode(), digest_size=8, key=key).hexdigest()
            if len(self.hashed) < 1_000_000:  # a client calls many times: hash it once
                self.hashed[raw] = known
        return known

    def path(self, raw: str) -> str:
        if self.keep_query:
            return raw
        cut = raw.find("?")
        return raw if cut < 0 else raw[:cut]


class LogRecord(NamedTuple):
    """One request: when it started, who sent it, what it asked, how it went.

    Times are seconds since the epoch; `start` is when the request began (nginx
    logs the end: the parser subtracts the request time). `duration` is the whole
    request as the proxy saw it, `upstream` the upstream's own part of it; either
    is None when the log has no such field.
    """

    start: float
    client: str
    method: str
    path: str
    status: int
    duration: float | None
    bytes_sent: int | None
    upstream: float | None
    timed_out: bool = False  # the proxy said the upstream timed out (Envoy's UT flag)
    operation: str | None = None  # an MCP request's JSON-RPC method (its Mcp-Method header)
