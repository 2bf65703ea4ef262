"""What the search answers: the next trial to run, or the ceiling it found.

`plimsoll.decide.search.next_action` returns one of these to the runner on every
turn. They never cross a process boundary (the runner persists the steps, not
the decision), so they are plain frozen dataclasses; `CeilingEstimate.to_status`
turns the final answer into the API's `Ceiling` once attribution is known.

An answer with no failing level above its pass (`every_level_passed`) is never
complete, whatever strategy found it: a ceiling is a pass below a failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.status import Ceiling, Headroom
from plimsoll.api.step import LimitedBy, TrialKind


@dataclass(frozen=True)
class NextTrial:
    """Run `level` for `duration` measured seconds; `attempt` > 1 repeats a noisy step."""

    level: int
    kind: TrialKind
    duration: float
    attempt: int = 1


@dataclass(frozen=True)
class CeilingEstimate:
    """The answer so far: the highest level that passed at full length, and its range.

    `level` never names a level that failed a full-length trial. `low` is the
    highest full-length pass below `high`, the lowest credible failing level;
    `spread` holds one entry per full-length pass of `level` (the original and
    its repeats), `flipped` the levels that passed and later failed.
    """

    level: int | None
    low: int | None
    high: int | None
    complete: bool
    stop_reason: str = ""
    spread: tuple[int, ...] = ()
    flipped: tuple[int, ...] = ()
    inconclusive: bool = False  # the host stayed busy: the range is not a ceiling
    # The strategy ran every level it had (its list, or up to its limit) and none failed:
    # "at least", never a ceiling. Not set on a run stopped early (invalid, max_trials).
    every_level_passed: bool = False

    def to_status(
        self,
        unit: str,
        variant: str = "default",
        limited_by: LimitedBy = LimitedBy.UNKNOWN,
        headroom: Headroom | None = None,
    ) -> Ceiling:
        reason = self.stop_reason
        if self.flipped:
            flips = ", ".join(str(level) for level in self.flipped)
            reason = f"{reason}; " if reason else ""
            reason += f"levels that passed then failed at full length: {flips}"
        if self.every_level_passed:
            # No failing step to compare with: no resource can be said to have limited it.
            limited_by = LimitedBy.UNKNOWN
        return Ceiling(
            level=self.level,
            unit=unit,
            low=self.low,
            high=self.high,
            spread=list(self.spread),
            limited_by=limited_by,
            headroom=headroom or Headroom(),
            complete=self.complete and not self.every_level_passed,
            every_level_passed=self.every_level_passed,
            inconclusive=self.inconclusive,
            stop_reason=reason,
            variant=variant,
        )


@dataclass(frozen=True)
class Finished:
    """The search is over: `ceiling` is final (complete) or the range found (not)."""

    ceiling: CeilingEstimate
