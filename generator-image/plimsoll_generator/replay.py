"""`workload.model: replay`: a recorded log's requests, sent at their logged times ÷ speed.

Built by `trial.build_drivers`. The schedule comes from `replay_source` (the
log read lazily, in start order, this process's clients only) and is paced by
`pacing.Pacer` in the open model's tick loop (`open_model.PacedDriver`): every
start inside the measured window is scheduled, sent late rather than skipped, and
counted on time or late.
Each client is mapped to one of `replay.connections` modeled connections (a
keep-alive pool of its own), so a client keeps its connection as it did. A
request is labelled with the mix operation that matches its method and path
(exact, then a '*' prefix, then the method alone, then the first operation).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from urllib.parse import quote

from plimsoll.api.replay import SPEED_UNIT, Replay
from plimsoll.shared.accesslog import LogRecord, Parser, Privacy
from plimsoll.shared.accesslog.formats import FieldMap
from plimsoll_generator.client import Pool, build_request, split_url
from plimsoll_generator.context import TrialContext
from plimsoll_generator.http_mix import MixEntry
from plimsoll_generator.open_model import PacedDriver
from plimsoll_generator.replay_source import (
    LogArrivals,
    ReplaySchedule,
    ReplayStart,
    client_hash,
)
from plimsoll_generator.tls import context_for

_SAFE_PATH = "/:@!$&'()*+,;=-._~%?"  # kept as they are; anything else is percent-encoded


def read_log(replay: Replay) -> Iterator[LogRecord]:
    """The log's records, one line at a time (a broken line is skipped, not fatal)."""
    parser = Parser(
        replay.format,
        client_field=replay.client,
        fields=FieldMap(dict(replay.fields), replay.time_at, replay.duration_unit),
        privacy=Privacy(keep_query=replay.keep_query),
    )
    opener = gzip.open if replay.log.endswith(".gz") else open
    with opener(replay.log, "rt", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = parser.parse(line)
            except ValueError:
                continue
            if record is not None:
                yield record


class Labels:
    """Which mix operation a logged request counts under (cached per method and path)."""

    def __init__(self, entries: list[MixEntry]) -> None:
        self.entries = entries
        self.cache: dict[tuple[str, str], MixEntry] = {}

    def entry(self, method: str, path: str) -> MixEntry:
        key = (method, path)
        found = self.cache.get(key)
        if found is None:
            found = self._match(method, path)
            if len(self.cache) < 100_000:
                self.cache[key] = found
        return found

    def _match(self, method: str, path: str) -> MixEntry:
        same_method = [e for e in self.entries if e.operation.method == method]
        for entry in same_method:
            if entry.operation.path == path:
                return entry
        for entry in same_method:
            op_path = entry.operation.path
            if op_path.endswith("*") and path.startswith(op_path[:-1]):
                return entry
        return same_method[0] if same_method else self.entries[0]


class ReplayDriver(PacedDriver):
    def __init__(self, ctx: TrialContext, level: float) -> None:
        super().__init__(ctx)
        ctx.one_pool()  # refuses several replicas when the trial is built, not mid-run
        workload = ctx.request.workload
        replay = workload.replay
        if replay is None:
            raise ValueError("model 'replay' needs workload.replay (the log to replay)")
        try:
            with open(replay.log, "rb"):
                pass
        except OSError as exc:
            raise ValueError(f"workload.replay.log: cannot read {replay.log!r}: {exc}") from exc
        arrivals = LogArrivals(
            lambda: read_log(replay),
            window=replay.reorder_window,
            part=ctx.request.replay_part,
            parts=ctx.request.replay_parts,
            loop=replay.loop,
        )
        self.pace(ReplaySchedule(arrivals, level / SPEED_UNIT))
        self.labels = Labels(self.mix.entries)
        self.parts = ctx.request.replay_parts
        self.connections: list[Pool | None] = [None] * replay.connections

    def _pool(self, client: str) -> Pool:
        slot = (client_hash(client) // self.parts) % len(self.connections)
        pool = self.connections[slot]
        if pool is None:
            if slot == 0:
                pool = self.ctx.one_pool()  # its bytes are the trial's; the others add theirs
            else:
                url = self.ctx.request.target_url
                host, port, _ = split_url(url)
                tls = context_for(url, self.ctx.request.workload.tls_verify)
                pool = Pool(host, port, tls, self.ctx.target_address)
                self.ctx.extra_pools.append(pool)
            self.connections[slot] = pool
        return pool

    def start_due(self, offset: float, start: float, record: bool, now: float) -> None:
        assert isinstance(offset, ReplayStart)  # ReplaySchedule's starts carry their record
        self._send(offset.record, start, record)

    def _send(self, logged: LogRecord, start: float, record: bool) -> None:
        ctx = self.ctx
        entry = self.labels.entry(logged.method, logged.path)
        # No modeled user behind a replayed client; 0.0: the pool stamps the send time.
        exchange = self.exchange(entry, start, record, -1, 0.0)
        ctx.in_flight += 1
        if record:
            ctx.sent += 1
        path = ctx.path(quote(logged.path, safe=_SAFE_PATH))
        payload = build_request(logged.method, path, ctx.host_header, entry.operation.headers)
        self._pool(logged.client).send(payload, exchange)
