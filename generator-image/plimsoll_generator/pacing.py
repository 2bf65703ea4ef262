"""Pacing the open model: which starts go out at a wake-up, and how each one counts.

`open_model.py` wakes on a coarse timer and asks a `Pacer` for every start due
within `LEAD` of now. The pacer is pure (the caller passes the clock and the
calls in flight), so the very code that paces a trial also runs in simulations
(the achieved-share property test drives it with made-up wake-up times).

Every start meant to begin inside the measured window is *scheduled*; at the
in-flight cap it is *dropped*; otherwise it is sent, *on time* when it left at
most `tolerance` seconds after its intended start, else *late*. The achieved
share the verdict judges is on-time ÷ scheduled: it depends only on what the
generator controls, never on how many starts a Poisson draw happened to put in
the window. How late each start left is kept as the start lag (contention on
the generator's host shows there first).
"""

from __future__ import annotations

from typing import Protocol

from plimsoll_generator.recorder import Series
from plimsoll_generator.schedule import Schedule

# Wake-ups on a shared host come up to a few ms late (measured: p99 ~2 ms, max
# ~6 ms, 1 ms timer granularity included); sending up to 5 ms early absorbs that,
# and an early send is timed from the send, so it never flatters a latency.
LEAD = 0.005
MIN_SLEEP = 0.001


class StartCounts(Protocol):
    """Where a pacer counts (the trial's context, or a simulation's tally)."""

    intended: int
    on_time: int
    dropped_starts: int
    start_lag: Series


class Pacer:
    """Starts of one schedule, in seconds from the trial start (warm-up included)."""

    def __init__(
        self,
        schedule: Schedule,
        counts: StartCounts,
        *,
        measure_from: float,
        horizon: float,
        cap: int,
        tolerance: float,
    ) -> None:
        self.schedule = schedule
        self.counts = counts
        self.measure_from = measure_from
        self.horizon = horizon
        self.cap = cap
        self.tolerance = tolerance

    def due(self, now: float, in_flight: int) -> list[tuple[float, bool]]:
        """The starts to send at `now`: (intended offset, inside the measured window)."""
        counts = self.counts
        out: list[tuple[float, bool]] = []
        for offset in self.schedule.take_until(min(now + LEAD, self.horizon)):
            if offset >= self.horizon:
                break
            record = offset >= self.measure_from
            if record:
                counts.intended += 1
            if in_flight + len(out) >= self.cap:
                if record:
                    counts.dropped_starts += 1
                continue
            if record:
                lateness = now - offset
                if lateness <= self.tolerance:
                    counts.on_time += 1
                counts.start_lag.add(max(lateness, 0.0))
            out.append((offset, record))
        return out

    def next_wake(self, now: float) -> float | None:
        """When to wake next (seconds from the trial start), or None: the schedule is done."""
        following = self.schedule.next_time
        if following >= self.horizon:
            return None
        return now + max(following - LEAD - now, MIN_SLEEP)
