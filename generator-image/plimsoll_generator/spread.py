"""Spreading a trial's connections over several replicas of the target.

When the runner names more than one target URL (`TrialRequest.replica_urls`,
one per replica on the local platform), every send goes through a
`SpreadPool`: one keep-alive `Pool` per replica, taken in turn, so the load
spreads evenly and each connection stays with the replica it was opened to
(a connection pins its client to a replica, as behind a real load balancer).
A replica whose connect is refused (nobody listens: the process is gone) is
left out, as a Service drops a lost pod's endpoint, so after a replica dies only
the calls in flight on it and the ones routed to it before it was noticed fail.
It is probed with a bare connect (no request, so nothing fails) every
`PROBE_INTERVAL`, and routed to again once it listens: a restored zone
(`trial.faults[].restore`) takes its share back, as a ready pod rejoins its
Service. Each trial has new pools; the requests routed to each replica are
counted for the timeline (`TimelineSlice.replica_sent`). Replicas an autoscaler has
not started yet (`TrialRequest.serving_replicas`) start left out and probed, and join
once they listen. Called by `context.py` in place of the single `Pool`; the same
send/fetch/close surface.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time

from plimsoll_generator.client import Exchange, Pool, split_url

# How often a replica that refused is probed with a bare connect (no request, so nothing
# fails): a restored zone's replicas take traffic again within about this long.
PROBE_INTERVAL = 0.5


class SpreadPool:
    def __init__(
        self, urls: list[str], tls: ssl.SSLContext | None, serving: int | None = None
    ) -> None:
        self.pools = [Pool(*split_url(url)[:2], tls) for url in urls]
        # Replicas past `serving` have not started (an autoscaler's room to grow): left
        # out until a probe finds them listening, so no request is sent to nobody.
        for pool in self.pools[serving if serving is not None else len(urls) :]:
            pool.refused = True
        self.tls = tls
        self.turn = 0
        self.sent = [0] * len(self.pools)  # requests routed to each replica, for the timeline
        self._probed = [0.0] * len(self.pools)
        self._probes: set[asyncio.Task[None]] = set()

    @property
    def bytes_in(self) -> int:
        return sum(pool.bytes_in for pool in self.pools)

    @property
    def bytes_out(self) -> int:
        return sum(pool.bytes_out for pool in self.pools)

    def pick(self) -> Pool:
        """The next replica in turn that has not refused a connect."""
        pools = self.pools
        for _ in range(len(pools)):
            index = self.turn % len(pools)
            self.turn += 1
            if not pools[index].refused:
                self.sent[index] += 1
                return pools[index]
            self._probe_later(index)
        index = self.turn % len(pools)  # every replica looks down: try one anyway
        self.sent[index] += 1
        return pools[index]

    def _probe_later(self, index: int) -> None:
        now = time.monotonic()
        if now - self._probed[index] < PROBE_INTERVAL:
            return
        self._probed[index] = now
        task = asyncio.get_running_loop().create_task(self._probe(self.pools[index]))
        self._probes.add(task)
        task.add_done_callback(self._probes.discard)

    async def _probe(self, pool: Pool) -> None:
        """Connect and close at once: a replica that listens again is routed to again."""
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(pool.address or pool.host, pool.port), 1.0
            )
        except (OSError, TimeoutError):
            return
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        pool.refused = False

    def send(self, payload: bytes, exchange: Exchange, fresh: bool = False) -> None:
        self.pick().send(payload, exchange, fresh)

    async def fetch(self, payload: bytes, exchange: Exchange | None = None) -> Exchange:
        return await self.pick().fetch(payload, exchange)

    def close(self) -> None:
        for task in self._probes:
            task.cancel()
        for pool in self.pools:
            pool.close()
