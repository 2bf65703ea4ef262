"""One call's behaviour drawn from a model: latency, whether and how it fails, its size.

Plain routes, MCP tools and LLM endpoints all describe behaviour with the same
`Latency`, `Errors` and `SizeChoice` models; this turns a model into a sampler
built once at start-up, so a call costs a few draws from `random`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from plimsoll.api.upstream import Errors, ErrorShape, Latency, SizeChoice
from plimsoll.shared.distributions import latency_sampler, size_sampler

DEFAULT_TIMEOUT_HOLD = 30.0
"""How long a `timeout`-shaped error holds the call when `timeoutAfter` is not set."""


class Behaviour:
    """Samplers for one route or tool."""

    __slots__ = (
        "error_shape",
        "error_status",
        "fraction",
        "latency",
        "random",
        "size",
        "timeout_hold",
    )

    def __init__(
        self,
        latency: Latency,
        errors: Errors,
        sizes: Sequence[SizeChoice] | None,
        rng: random.Random,
        timeout_after: float | None = None,
    ) -> None:
        self.latency = latency_sampler(latency, rng)
        self.size = size_sampler(sizes, rng) if sizes else (lambda: 0)
        self.fraction = errors.fraction
        self.error_shape = errors.shape
        self.error_status = errors.status
        self.random = rng.random
        self.timeout_hold = timeout_after if timeout_after is not None else DEFAULT_TIMEOUT_HOLD

    def fails(self) -> ErrorShape | None:
        """The shape of this call's error, or None when it succeeds."""
        if self.fraction and self.random() < self.fraction:
            return self.error_shape
        return None
