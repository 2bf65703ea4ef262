"""Bounded retries with exponential backoff and jitter for Kubernetes API calls.

A brief API-server outage (a restart, a leader election, 429s under load) must
not end a run that has measured for an hour, so `KubeClient` retries every
idempotent request that failed with a `TemporaryKubeError`: a GET, a DELETE, a
merge PATCH that sets fixed values, and a create by name (a retried create
whose first attempt did land answers 409, which the caller adopts). Waits grow
as `base * 2**n`, capped at `cap`, with "equal jitter" (half fixed, half
random) so that many clients retrying together spread out; a server's
Retry-After replaces the backoff. The whole retry is bounded twice: by
`attempts` and by `budget` seconds of event-loop time (so tests can run it
under fake time); past either bound the last error is raised.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TypeVar

from plimsoll.kube.errors import TemporaryKubeError

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 10  # calls in all, the first one included
    base: float = 0.5  # seconds before the first retry (before jitter)
    cap: float = 8.0  # the longest backoff between two calls
    budget: float = 60.0  # seconds from the first call after which no retry starts
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (1-based): half fixed, half random."""
        ceiling = min(self.cap, self.base * 2.0 ** (retry - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)


NO_RETRIES = RetryPolicy(attempts=1)


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date; None if absent or
    unreadable (the backoff decides then)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


async def retrying(
    call: Callable[[], Awaitable[T]], policy: RetryPolicy, what: str = "request"
) -> T:
    """Run `call`, again after each `TemporaryKubeError`, within the policy's bounds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + policy.budget
    retry = 0
    while True:
        try:
            return await call()
        except TemporaryKubeError as exc:
            retry += 1
            delay = exc.delay if exc.delay is not None else policy.backoff(retry)
            if retry >= policy.attempts or loop.time() + delay > deadline:
                raise
            log.warning("%s failed (%s); retry %d in %.1f s", what, exc.message, retry, delay)
            await asyncio.sleep(delay)
