"""Whether several generators' clocks agree well enough to start one trial together.

The runner reads each generator's clock over its control API a few times
(`plimsoll.run.trial_client`). The generator read its clock somewhere inside the
round trip, so its offset from the runner's clock is its reading minus the round
trip's midpoint, give or take half the round trip; the reading with the shortest
round trip bounds it best, as NTP's clock filter keeps its shortest-delay sample.
The trial's start time is then sent to each generator on its own clock (the offset
added), so they start within those few milliseconds of each other. A generator
whose clock is off by more than `MAX_OFFSET_SECONDS` is refused all the same: its
node's clock is not being kept, and its timelines and logs would not line up with
the others'. Pure: the readings are passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_OFFSET_SECONDS = 0.050  # the bar: generators that start together agree to 50 ms
# Before the earliest start the trial requests still have to reach every generator, one
# after another, and each generator has to build its drivers (a replay reads its log's
# first window: 30-150 ms measured). Each round trip counts four times over for the POST,
# which carries a body and is forwarded to the generator's processes.
START_LEAD_SECONDS = 0.5
ROUND_TRIPS_PER_START = 4


@dataclass(frozen=True)
class ClockSample:
    """One reading: the runner's clock as it asked and as the answer came, and theirs."""

    sent: float
    theirs: float
    received: float


@dataclass(frozen=True)
class ClockOffset:
    """How far a generator's clock is ahead of the runner's (negative: behind)."""

    offset: float
    uncertainty: float  # half the shortest round trip

    @property
    def round_trip(self) -> float:
        return 2 * self.uncertainty


def offset_of(samples: Sequence[ClockSample]) -> ClockOffset:
    """The offset from the reading with the shortest round trip."""
    if not samples:
        raise ValueError("no clock readings to estimate an offset from")
    best = min(samples, key=lambda s: s.received - s.sent)
    half = max(0.0, best.received - best.sent) / 2
    return ClockOffset(offset=best.theirs - (best.sent + half), uncertainty=half)


def refusal(url: str, clock: ClockOffset, limit: float = MAX_OFFSET_SECONDS) -> str | None:
    """Why the generator at `url` may not join a synchronised start; None if it may.
    Refused when its clock is off by more than `limit`, or when even its shortest round
    trip leaves the offset unknown to within `limit`."""
    fix = "keep the nodes' clocks synchronised (chrony or systemd-timesyncd) and run again"
    if abs(clock.offset) > limit:
        side = "ahead of" if clock.offset > 0 else "behind"
        return (
            f"generator {url}'s clock is {abs(clock.offset) * 1000:.0f} ms {side} the "
            f"runner's (give or take {clock.uncertainty * 1000:.1f} ms); generators that start "
            f"a trial together must agree within {limit * 1000:.0f} ms: {fix}"
        )
    if clock.uncertainty > limit:
        return (
            f"generator {url}'s clock cannot be read to within {limit * 1000:.0f} ms: its "
            f"shortest round trip took {clock.round_trip * 1000:.0f} ms; {fix}, and check "
            "the path from the runner to the generators"
        )
    return None


def start_lead(clocks: Sequence[ClockOffset]) -> float:
    """Seconds from now to the trial's start: time for every request to arrive first."""
    return START_LEAD_SECONDS + ROUND_TRIPS_PER_START * sum(c.round_trip for c in clocks)


def start_on_their_clock(start_at: float, clock: ClockOffset) -> float:
    """The runner's start time as the generator's clock will read it then."""
    return start_at + clock.offset
