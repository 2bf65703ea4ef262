"""How a modeled user spaces and decorates its calls (the MCP-gateway seed).

Pure: a `UserBehaviour` draws from a seeded `random.Random` and returns numbers
and booleans; `users.py` turns them into sleeps and requests. The tests check
the draws statistically, with no clock.

Gaps between calls come in bursts: a gap is either an in-burst gap (lognormal
whose median is `burst_gap_median`) or, with probability 1 - BURST_CONTINUE, a
pause between bursts (exponential) sized so that the mean of all gaps is
`mean_gap`. Bursts therefore average 1 / (1 - BURST_CONTINUE) = 5 calls.
Gaps run from one call's start to the next (as inter-call gaps are measured in
production); a call that outlasts its gap is followed at once by the next.

A user's first call comes after `first_gap`: the time from a random moment to the
next call of this process in its steady state (the residual of a length-biased
gap), not after a fresh gap. A fresh gap is in-burst four times in five, so every
user would start a trial inside a burst and the first minutes would run at several
times the modeled rate (bench/scale.py measured 0.065 calls a second per user
where the steady state is 0.022); the pauses that carry the mean last minutes, so
no warm-up would wash that out.

Bots (the seed: 1% of users, almost half of all traffic) are scripts: each starts
calls at a steady `bot_rate` with up to `bot_in_flight` open at once, so a slow
tool does not slow a bot down as it would a sequential caller.
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
        # The share of time spent inside in-burst gaps: a random moment falls in one with
        # this probability (gaps weighted by their length).
        in_burst_time = self.p_in_burst * in_burst_mean
        self.p_moment_in_burst = in_burst_time / (
            in_burst_time + (1 - self.p_in_burst) * self.pause_mean
        )

    def sample(self, rng: random.Random) -> tuple[float, bool]:
        """One gap in seconds, and whether it lies inside a burst."""
        if rng.random() < self.p_in_burst:
            return rng.lognormvariate(self.mu, self.sigma), True
        return rng.expovariate(1.0 / self.pause_mean), False

    def residual(self, rng: random.Random) -> float:
        """Seconds from a random moment to the next gap's end, in the steady state: the
        gap that moment falls in is length-biased (a lognormal's is the lognormal with mu
        raised by sigma squared, an exponential's a gamma of shape 2), and the moment
        lies uniformly inside it."""
        if rng.random() < self.p_moment_in_burst:
            biased = rng.lognormvariate(self.mu + self.sigma**2, self.sigma)
        else:
            biased = rng.gammavariate(2.0, self.pause_mean)
        return rng.random() * biased


def is_bot(user_index: int, fraction: float) -> bool:
    """Bots are spread evenly over user indices, so any split keeps the exact share.

    User i is a bot when floor((i + 1) * f) > floor(i * f): the first n users then
    hold floor(n * f) bots, however the population is cut into processes.
    """
    return math.floor((user_index + 1) * fraction) > math.floor(user_index * fraction)


def bot_rate(users: Users) -> float:
    """Calls per second one bot starts.

    With `bot_share` s and bot fraction f, humans start (1 - f) / mean_gap calls per
    second per user, and bots make s / (1 - s) times what humans make, spread over the f
    bots: s / (1 - s) x (1 - f) / (f x mean_gap) each (at the seed's 1%, 50% and 90 s,
    1.1 calls/s). Without a share, or when every user is a bot, one call every `bot_gap`.
    """
    share, fraction = users.bot_share, users.bot_fraction
    if share is None or fraction >= 1.0 or fraction <= 0.0:
        return 1.0 / users.bot_gap
    return share / (1.0 - share) * (1.0 - fraction) / (fraction * users.mean_gap)


def bot_in_flight(rate: float, timeout: float, cap: int) -> int:
    """The most calls one bot holds open: as many as its rate keeps open for the
    workload's timeout (Little's law; a call never outlives the timeout, so a bot that
    needs more is facing a target that times out anyway), at least one, at most `cap`."""
    return max(1, min(cap, math.ceil(rate * timeout)))


class UserBehaviour:
    """One user's decisions: its gaps, page views, re-lists and reconnects."""

    def __init__(self, users: Users, user_index: int, rng: random.Random) -> None:
        self.users = users
        self.rng = rng
        self.bot = is_bot(user_index, users.bot_fraction)
        self.gaps = GapModel(users.burst_gap_median, users.mean_gap)

    def next_gap(self) -> float:
        """Seconds from this human's call start to its next (bots use `bot_rate`)."""
        return self.gaps.sample(self.rng)[0]

    def first_delay(self) -> float:
        """When the user connects: at a random point of the ramp."""
        return self.rng.uniform(0.0, self.users.ramp) if self.users.ramp > 0 else 0.0

    def first_gap(self) -> float:
        """Seconds from connecting to this human's first call: as if it had been calling
        for a long time already (`GapModel.residual`), so a trial starts steady."""
        return self.gaps.residual(self.rng)

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
