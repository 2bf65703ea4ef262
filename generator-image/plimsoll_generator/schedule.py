"""Arrival schedules of the open model: when each request is meant to start.

Pure (no clock, no loop): `open_model.py` asks for the intended start times up to
"now plus a lead" at each wake-up, so it sleeps to the next due time in batches
instead of arming one timer per request. Times are seconds from the trial start.
"""

from __future__ import annotations

import random

from plimsoll.api.workload import Arrival
from plimsoll.shared.rate_profile import RateProfile


class Schedule:
    """Intended start times at `rate` per second, uniform or Poisson spaced."""

    def __init__(self, rate: float, arrival: Arrival, rng: random.Random) -> None:
        if rate < 0:
            raise ValueError("a rate cannot be negative")
        self.rate = rate
        self.poisson = arrival is Arrival.POISSON
        self.rng = rng
        self.count = 0
        # Uniform times are index / rate (no accumulated float drift); Poisson
        # times accumulate exponential gaps, starting with one gap.
        self.next_time = self._poisson_gap() if self.poisson else 0.0
        if rate == 0:
            self.next_time = float("inf")

    def _poisson_gap(self) -> float:
        return self.rng.expovariate(self.rate) if self.rate > 0 else float("inf")

    def _advance(self) -> None:
        self.count += 1
        if self.poisson:
            self.next_time += self._poisson_gap()
        else:
            self.next_time = self.count / self.rate

    def take_until(self, until: float, limit: int = 1_000_000) -> list[float]:
        """The intended times <= `until` not taken yet (at most `limit` of them)."""
        out: list[float] = []
        while self.next_time <= until and len(out) < limit:
            out.append(self.next_time)
            self._advance()
        return out


class ProfiledSchedule(Schedule):
    """Intended start times at `rate` times the profile's share at each moment: the open
    model under a load profile (issue 57). The starts due by a time are the rate times
    the profile's integral (`RateProfile.area`); each start is where that count is first
    reached (`RateProfile.time_of`): uniform at whole counts, Poisson at the counts of a
    unit-rate Poisson process, so the profile moves when starts are due and never how
    they are spaced at a given rate."""

    def __init__(
        self, rate: float, profile: RateProfile, arrival: Arrival, rng: random.Random
    ) -> None:
        if rate < 0:
            raise ValueError("a rate cannot be negative")
        self.rate = rate
        self.profile = profile
        self.poisson = arrival is Arrival.POISSON
        self.rng = rng
        self.count = 0
        self.due = rng.expovariate(1.0) if self.poisson else 0.0  # in starts
        self.next_time = self._when(self.due) if rate > 0 else float("inf")

    def _when(self, due: float) -> float:
        return self.profile.time_of(due / self.rate)

    def _advance(self) -> None:
        self.count += 1
        self.due = self.due + self.rng.expovariate(1.0) if self.poisson else float(self.count)
        self.next_time = self._when(self.due)
