"""Spreading a trial's connections over several replicas of the target.

When the runner names more than one target URL (`TrialRequest.replica_urls`,
one per replica on the local platform), every send goes through a
`SpreadPool`: one keep-alive `Pool` per replica, taken in turn, so the load
spreads evenly and each connection stays with the replica it was opened to
(a connection pins its client to a replica, as behind a real load balancer).
A replica whose connect is refused (nobody listens: the process is gone) is
left out for the rest of the trial, as a Service drops a lost pod's endpoint, so
after a replica dies only the calls in flight on it and the ones routed to it
before it was noticed fail. A lost replica comes back only before the next
trial (the platform holds it down until then), and each trial has new pools. Called by
`context.py` in place of the single `Pool`; the same send/fetch/close surface.
"""

from __future__ import annotations

import ssl

from plimsoll_generator.client import Exchange, Pool, split_url


class SpreadPool:
    def __init__(self, urls: list[str], tls: ssl.SSLContext | None) -> None:
        self.pools = [Pool(*split_url(url)[:2], tls) for url in urls]
        self.tls = tls
        self.turn = 0

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
            pool = pools[self.turn % len(pools)]
            self.turn += 1
            if not pool.refused:
                return pool
        return pools[self.turn % len(pools)]  # every replica looks down: try one anyway

    def send(self, payload: bytes, exchange: Exchange, fresh: bool = False) -> None:
        self.pick().send(payload, exchange, fresh)

    async def fetch(self, payload: bytes, exchange: Exchange | None = None) -> Exchange:
        return await self.pick().fetch(payload, exchange)

    def close(self) -> None:
        for pool in self.pools:
            pool.close()
