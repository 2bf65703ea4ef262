"""A load that changes over one trial (issue 57's load profile): a base held, a burst or a
ramp to a peak, a fall, as a share of the trial's level through time.

The shape is piecewise linear through `(seconds, share)` points from 0 s, and flat at
its last share after the last point, so a hold is two points at one share and a step
is two points at one time. The open model needs, for each start, the time at which the
starts so far reach its count: the inverse of the shape's integral (`time_of`), solved
per linear piece in closed form (a quadratic on a ramp). Uniform starts are the k-th
at `time_of(k / level)`; Poisson starts are a unit-rate Poisson process mapped through
the same inverse (the time-rescaling theorem), so a profile changes when starts are
due, never how they are spaced within a rate. Pure, shared by the runner (which
checks the profile) and the generator (which paces by it).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.autoscale import ProfilePhase


@dataclass(frozen=True)
class RateProfile:
    points: tuple[tuple[float, float], ...]  # (seconds, share of the level), from 0 s

    def __post_init__(self) -> None:
        if not self.points or self.points[0][0] != 0:
            raise ValueError("a profile starts at 0 s")
        times = [t for t, _ in self.points]
        if any(b < a for a, b in itertools.pairwise(times)):
            raise ValueError("a profile's times never go back")
        if any(share < 0 or not math.isfinite(share) for _, share in self.points):
            raise ValueError("a profile's shares are finite and not negative")

    @classmethod
    def of(cls, points: Sequence[tuple[float, float]]) -> RateProfile:
        return cls(tuple((float(t), float(s)) for t, s in points))

    def share_at(self, t: float) -> float:
        """The share of the level due at `t` seconds (a step takes its later share)."""
        index = bisect.bisect_right([p[0] for p in self.points], t) - 1
        if index >= len(self.points) - 1:
            return self.points[-1][1]
        (t0, s0), (t1, s1) = self.points[index], self.points[index + 1]
        return s0 + (s1 - s0) * (t - t0) / (t1 - t0)

    def area(self, t: float) -> float:
        """The shares integrated from 0 to `t`: the starts due so far, per unit of level."""
        total = 0.0
        for (t0, s0), (t1, s1) in itertools.pairwise(self.points):
            if t <= t0:
                return total
            end = min(t, t1)
            if end > t0:  # a step (t0 == t1) adds nothing
                at_end = s0 + (s1 - s0) * (end - t0) / (t1 - t0)
                total += (end - t0) * (s0 + at_end) / 2
        last_t, last_share = self.points[-1]
        return total + max(0.0, t - last_t) * last_share

    def time_of(self, area: float) -> float:
        """The first time the integrated shares reach `area`; inf when they never do."""
        if area <= 0:
            return 0.0
        left = area
        for (t0, s0), (t1, s1) in itertools.pairwise(self.points):
            d = t1 - t0
            piece = d * (s0 + s1) / 2
            if left <= piece and piece > 0:
                return t0 + _into_piece(s0, s1, d, left)
            left -= piece
        last_t, last_share = self.points[-1]
        return last_t + left / last_share if last_share > 0 else math.inf

    @property
    def seconds(self) -> float:
        """When the last point is reached (the shape stays flat after it)."""
        return self.points[-1][0]

    @property
    def peak(self) -> float:
        return max(share for _, share in self.points)


def _into_piece(s0: float, s1: float, d: float, area: float) -> float:
    """How far into a linear piece (from share s0 to s1 over d seconds) the integral
    reaches `area`, 0 < area <= the piece's."""
    slope = (s1 - s0) / d
    if abs(slope) < 1e-12:
        return area / s0
    # s0 x + slope x^2 / 2 = area; the root in [0, d], written to stay exact when s0 = 0.
    return 2 * area / (s0 + math.sqrt(s0 * s0 + 2 * slope * area))


def of_phases(phases: Sequence[ProfilePhase]) -> RateProfile:
    """`workload.profile` as shares of its highest level (the trial's level): the first
    phase holds its level from 0 s, each next one ramps to its own, then holds it."""
    peak = max(p.level for p in phases)
    if peak <= 0:
        raise ValueError("a profile needs a level above 0")
    t, points = 0.0, [(0.0, phases[0].level / peak)]
    for index, phase in enumerate(phases):
        if index > 0:
            t += phase.ramp
            points.append((t, phase.level / peak))
        if phase.hold > 0:
            t += phase.hold
            points.append((t, phase.level / peak))
    return RateProfile.of(points)
