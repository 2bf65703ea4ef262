"""The step history folded into what the strategies decide from.

Called by every strategy through `plimsoll.decide.search.next_action`. A strategy
never looks at the order of the history, only at what each level did: that is
what makes the search a pure function of the history, so a run resumed from
`status.steps` (any prefix of it) makes the same decisions as one that never
stopped. Noisy and invalid steps are dealt with before the strategies see the
history (see `plimsoll.decide.search.__init__`), so here only pass and fail count.

The rules more than one strategy follows live here too, so they cannot drift
apart: the next level for a bracket (`narrow`), the repeats and the stop
once it is narrow (`repeat_then_stop`), and the answer (`Evidence.estimate`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.search.actions import CeilingEstimate, NextTrial

# Why an answer with no failing level is only "at least": the report says it as is.
EVERY_LEVEL_PASSED = "every level passed"


@dataclass(frozen=True)
class Evidence:
    """Settled verdicts by level and kind of trial."""

    full_pass: Counter[int]
    full_fail: frozenset[int]
    probe_pass: frozenset[int]
    probe_fail: frozenset[int]

    @classmethod
    def of(cls, records: Iterable[StepRecord]) -> Evidence:
        full_pass: Counter[int] = Counter()
        full_fail: set[int] = set()
        probe_pass: set[int] = set()
        probe_fail: set[int] = set()
        for record in records:
            full = record.kind is TrialKind.FULL
            if record.verdict is Verdict.PASS:
                if full:
                    full_pass[record.level] += 1
                else:
                    probe_pass.add(record.level)
            elif record.verdict is Verdict.FAIL:
                (full_fail if full else probe_fail).add(record.level)
        return cls(full_pass, frozenset(full_fail), frozenset(probe_pass), frozenset(probe_fail))

    @property
    def full_high(self) -> int | None:
        """The lowest level that failed at full length: the ceiling lies below it."""
        return min(self.full_fail, default=None)

    @property
    def full_low(self) -> int | None:
        """The highest full-length pass below `full_high`: the only reportable ceiling."""
        high = self.full_high
        return max((lv for lv in self.full_pass if high is None or lv < high), default=None)

    @property
    def flipped(self) -> tuple[int, ...]:
        """Levels that passed at full length and also failed at full length."""
        return tuple(sorted(self.full_fail.intersection(self.full_pass)))

    def estimate(
        self, level: int | None, high: int | None, reason: str, complete: bool
    ) -> CeilingEstimate:
        """The answer with `level` (a full-length pass, or None) as the ceiling: its passes
        are the spread, and the flips go with it."""
        return CeilingEstimate(
            level=level,
            low=level,
            high=high,
            complete=complete,
            stop_reason=reason,
            spread=(level,) * self.full_pass[level] if level is not None else (),
            flipped=self.flipped,
        )


def within(low: int, high: int, precision: float) -> bool:
    """True when the bracket is as narrow as asked, or as narrow as integers allow."""
    return high - low <= 1 or high <= low * (1.0 + precision) + 1e-9


def narrow(low: int | None, high: int | None, search: Search) -> int | None:
    """The next level for a bracket, or None when the bracket needs no more trials.

    Nothing known: `start`. Only failures: divide the lowest by `factor` (2: halve),
    down to `floor`. Only passes: multiply the highest by `factor`, up to `limit`.
    Both: bisect until `within`.
    """
    if low is None and high is None:
        return search.start
    if low is None:
        assert high is not None
        return None if high <= search.floor else max(search.floor, int(high / search.factor))
    if high is None:
        grown = max(low + 1, int(low * search.factor))
        return None if low >= search.limit else min(grown, search.limit)
    if within(low, high, search.precision):
        return None
    return (low + high) // 2


def repeat_then_stop(
    search: Search,
    trial: Trial,
    evidence: Evidence,
    low: int,
    high: int | None,
    stop: Callable[[str, bool], CeilingEstimate],
) -> NextTrial | CeilingEstimate:
    """Once the bracket needs no more levels: run `low` again at full length until it has
    passed `repeats` more times (the spread), then stop: complete, or at the limit."""
    if evidence.full_pass[low] < search.repeats + 1:
        return NextTrial(low, TrialKind.FULL, trial.duration)
    if high is None:
        answer = stop(f"{EVERY_LEVEL_PASSED} up to the limit ({search.limit})", False)
        return dataclasses.replace(answer, every_level_passed=True)
    return stop("", True)
