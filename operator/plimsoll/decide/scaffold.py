"""The starting values `plimsoll init` writes into a new spec, from one short probe.

Pure: the probe's figures in, the numbers out; `plimsoll.cli.init` measures and
writes. The rules, each stated in the spec it writes so a user can judge them:

1. The search doubles from a quarter of the rate the probe achieved. The probe is a
   closed loop of a few connections, so it reaches roughly what the service answers
   at low concurrency; a quarter of that passes on most services, and doubling from
   it reaches the ceiling in a few steps (a failing first level halves instead).
2. The p99 bar is the probe's p99 times `BAR_FACTOR`, and never under `BAR_FLOOR`:
   a service's latency grows well before it saturates, five times its unloaded p99
   is a bar it holds only with room to spare, and below 50 ms the scheduling noise
   of a busy host, not the service, would decide the verdicts.
3. Errors: at most 0.1% of answers may fail, transport errors and unexpected
   answers alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

BAR_FACTOR = 5.0
BAR_FLOOR = 0.050  # seconds
START_SHARE = 0.25
ERROR_FRACTION = 0.001


@dataclass(frozen=True)
class ProbeFigures:
    """What one probe measured: every answer's latency (seconds), the failures, the time."""

    latencies: Sequence[float]  # of the answers that succeeded
    failures: int
    seconds: float
    connections: int

    @property
    def answered(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.answered / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Scaffold:
    """The values a new spec starts from, with the figures they came from."""

    start: int  # the first level (requests per second)
    p99_bar: float  # seconds
    probe_p50: float
    probe_p99: float
    probe_rate: float


def quantile(values: Sequence[float], q: float) -> float:
    """The `q` quantile by the nearest-rank rule (a value that was measured)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _round_down(value: float) -> int:
    """1, 2 or 5 times a power of ten, at most `value` (and at least 1): a level people
    read as chosen, not measured to the unit."""
    if value < 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return int(max(m * power for m in (1, 2, 5) if m * power <= value))


def _round_up_ms(seconds: float) -> float:
    """Whole milliseconds, rounded up."""
    return math.ceil(seconds * 1000 - 1e-9) / 1000


def scaffold(probe: ProbeFigures) -> Scaffold:
    """The start level and the p99 bar from `probe` (rules 1 and 2)."""
    if probe.answered == 0:
        raise ValueError("the probe got no successful answer")
    p99 = quantile(probe.latencies, 0.99)
    return Scaffold(
        start=_round_down(probe.rate * START_SHARE),
        p99_bar=max(_round_up_ms(p99 * BAR_FACTOR), BAR_FLOOR),
        probe_p50=quantile(probe.latencies, 0.50),
        probe_p99=p99,
        probe_rate=probe.rate,
    )
