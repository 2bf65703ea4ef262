"""What every workload of one trial shares: the pool, the clock, the counters.

Built by `trial.py` for one worker process and handed to the workload drivers
(`open_model.py`, `users.py`, `conversation.py`, `streams.py`). Times are
`time.perf_counter()` seconds; `t0` is the start of the warm-up, and only work
meant to start inside [measure_from, end) is recorded.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from plimsoll.api.trial import StreamHealth, TrialRequest
from plimsoll_generator.client import Pool, split_url
from plimsoll_generator.client_ips import ClientIpPool
from plimsoll_generator.recorder import Recorder, Series
from plimsoll_generator.spread import SpreadPool
from plimsoll_generator.tls import context_for


@dataclass
class TrialContext:
    request: TrialRequest
    pool: Pool | SpreadPool  # several: one per replica of the target (`spread.py`)
    recorder: Recorder
    rng: random.Random
    host_header: str
    base_path: str
    t0: float
    measure_from: float
    end: float
    ips: ClientIpPool | None = None
    target_address: str | None = None  # every target connection goes here when set
    extra_pools: list[Pool] = field(default_factory=list)  # a replay's per-client connections
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    streams: StreamHealth = field(default_factory=StreamHealth)
    intended: int = 0  # starts scheduled inside the measured window
    sent: int = 0
    on_time: int = 0  # sent within the workload's late tolerance of their schedule
    dropped_starts: int = 0
    start_lag: Series = field(default_factory=Series)  # how late open-model starts left
    in_flight: int = 0
    page_views: int = 0  # modeled users' page views sent inside the window
    bot_requests: int = 0  # requests bots sent inside the window (part of `sent`)

    @classmethod
    def create(
        cls, request: TrialRequest, recorder: Recorder, address: str | None = None
    ) -> TrialContext:
        """`address`: the target's checked address (`target_address`), or None: by name."""
        host, port, base = split_url(request.target_url)
        tls = context_for(request.target_url, request.workload.tls_verify)
        t0 = time.perf_counter()
        measure_from = t0 + request.warm_up
        ips = None
        if request.workload.client_ips is not None:
            ips = ClientIpPool(request.workload.client_ips, request.client_ip_offset)
        return cls(
            request=request,
            # Replicas are the platform's own processes on loopback: reached by their URLs.
            pool=SpreadPool(request.replica_urls, tls, request.serving_replicas)
            if len(request.replica_urls) > 1
            else Pool(host, port, tls, address),
            target_address=address,
            recorder=recorder,
            rng=random.Random(request.seed),
            host_header=f"{host}:{port}",
            base_path=base,
            t0=t0,
            measure_from=measure_from,
            end=measure_from + request.duration,
            ips=ips,
        )

    def one_pool(self) -> Pool:
        """The single target's pool, for the drivers that are not spread over replicas."""
        if isinstance(self.pool, Pool):
            return self.pool
        raise ValueError(
            "target.replicas above 1 is built for the http and mcp drivers; a replay or a "
            "streams probe drives one replica: set target.replicas to 1"
        )

    def path(self, path: str) -> str:
        """A mix path under the target URL's own path prefix."""
        return self.base_path + path if self.base_path else path

    def start_users(
        self, users: int, user: Callable[[int], Coroutine[Any, Any, None]]
    ) -> list[asyncio.Task[None]]:
        """One task per user of this process's share, numbered from `request.first_user` so
        ids (and the client IPs and bots they pick) never repeat across processes."""
        loop = asyncio.get_running_loop()
        first = self.request.first_user
        return [loop.create_task(user(index)) for index in range(first, first + users)]

    def start_clock(self) -> None:
        """Begin the trial now: everything built since `create` (a replay reads its log's
        first reorder window, 30-150 ms measured) would otherwise be counted against the
        schedule, and the first starts would leave late in a clump. Drivers hold only
        offsets from `t0` until they start, so shifting the three times moves the trial."""
        shift = time.perf_counter() - self.t0
        self.t0 += shift
        self.measure_from += shift
        self.end += shift

    def measuring(self, when: float) -> bool:
        return self.measure_from <= when < self.end

    async def sleep_until(self, when: float) -> bool:
        """Sleep until `when` (perf_counter); False if the trial stopped first."""
        # Drivers' tasks are cancelled on abort, so a plain sleep is enough here.
        delay = min(when, self.end) - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        return not self.stopped.is_set() and time.perf_counter() < self.end
