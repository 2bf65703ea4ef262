"""How a modeled user spaces and decorates its calls (the MCP-gateway seed).

Pure: a `UserBehaviour` draws from a seeded `random.Random` and returns numbers
and booleans; `users.py` turns them into sleeps and requests. The tests check
the draws statistically, with no clock.

Gaps between calls come in bursts: a gap is either an in-burst gap (lognormal
whose median is `burst_gap_median`) or, with probability 1 - BURST_CONTINUE, a
pause between bursts (exponential) sized so that the mean of all gaps is
`mean_gap`. Bursts therefore average 1 / (1 - BURST_CONTINUE) = 5 calls.
"""

from __future__ import annotations

import math
import random

from plimsoll.api.workload import Users

BURST_CONTINUE = 0.8  # chance the next gap stays inside the burst
IN_BURST_SIGMA = 0.8  # spread of in-burst gaps (log scale)


class GapModel:
    """The bursty gap distribution with a given in-burst median and overall mean."""

    def __init__(self, median: float, mean: float) -> None:
        if median <= 0 or mean < median:
            raise ValueError("the gaps need 0 < median <= mean")
        self.mu = math.log(median)
        # Narrow the in-burst spread when the overall mean leaves no room for pauses.
        self.sigma = min(IN_BURST_SIGMA, math.sqrt(2 * math.log(mean / median)))
        in_burst_mean = median * math.exp(self.sigma**2 / 2)
        if mean - in_burst_mean <= 1e-9 * mean:
            self.p_in_burst = 1.0
            self.pause_mean = 0.0
        else:
            self.p_in_burst = BURST_CONTINUE
            self.pause_mean = (mean - BURST_CONTINUE * in_burst_mean) / (1 - BURST_CONTINUE)

    def sample(self, rng: random.Random) -> tuple[float, bool]:
        """One gap in seconds, and whether it lies inside a burst."""
        if rng.random() < self.p_in_burst:
            return rng.lognormvariate(self.mu, self.sigma), True
        return rng.expovariate(1.0 / self.pause_mean), False


def is_bot(user_index: int, fraction: float) -> bool:
    """Bots are spread evenly over user indices, so any split keeps the exact share.

    User i is a bot when floor((i + 1) * f) > floor(i * f): the first n users then
    hold floor(n * f) bots, however the population is cut into processes.
    """
    return math.floor((user_index + 1) * fraction) > math.floor(user_index * fraction)


class UserBehaviour:
    """One user's decisions: its gaps, page views, re-lists and reconnects."""

    def __init__(self, users: Users, user_index: int, rng: random.Random) -> None:
        self.users = users
        self.rng = rng
        self.bot = is_bot(user_index, users.bot_fraction)
        self.gaps = GapModel(users.burst_gap_median, users.mean_gap)

    def next_gap(self) -> float:
        if self.bot:
            return self.users.bot_gap
        return self.gaps.sample(self.rng)[0]

    def first_delay(self) -> float:
        """Start within the ramp, then at a random point of the user's first gap."""
        return self.rng.uniform(0.0, self.users.ramp) if self.users.ramp > 0 else 0.0

    def page_view(self) -> bool:
        return self.rng.random() < self.users.page_view_fraction

    def relist(self) -> bool:
        return self.rng.random() < self.users.relist_fraction

    def next_reconnect(self) -> float:
        """Seconds until this user's next reconnect (inf when reconnects are off)."""
        every = self.users.reconnect_every
        if not every:
            return math.inf
        return self.rng.expovariate(1.0 / every)
