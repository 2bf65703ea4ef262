"""Simulated targets with a known ceiling, and a loop that drives the search against them.

Used by the search's property tests and by `bench/search.py` (which puts this
folder on `sys.path`). A target's bar is "score(level) <= 1", where the score
grows with the level; its true ceiling is known exactly, so a search's answer
can be checked against it. What a real host adds is optional and seeded, so a
run is reproducible, and each trial's outcome depends only on
(seed, trial index), so a run resumed from a prefix sees the same outcomes:

- `wiggle`: a ripple on the score, making the curve slightly non-monotone near
  the ceiling (a level may fail while a slightly higher one passes);
- `jitter`: the bar a trial sees moves by a normal fraction of this standard
  deviation at full length, growing as 1/sqrt(duration) for shorter trials
  (fewer samples, noisier quantiles);
- `probe_bias`: short trials see this much more capacity at zero length,
  shrinking linearly to none at full length (queues and memory take time to
  build up);
- `false_fail`: the probability that a trial the target would pass fails
  anyway (a stall the direct-call floor did not catch);
- `stall`: the probability that a trial is noisy (the floor caught a stall).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import cached_property

from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import StepRecord, Verdict
from plimsoll.decide.search import Finished, NextTrial, next_action

RIPPLE_PERIOD = 0.03  # of the ceiling: the width of one wiggle of the curve


@dataclass(frozen=True)
class SimTarget:
    capacity: int  # where the score crosses 1 without the wiggle
    wiggle: float = 0.0
    jitter: float = 0.0
    probe_bias: float = 0.0
    false_fail: float = 0.0
    stall: float = 0.0
    seed: int = 0

    def score(self, level: int) -> float:
        ripple = math.sin(2 * math.pi * level / (RIPPLE_PERIOD * self.capacity))
        return level / self.capacity * (1 + self.wiggle * ripple)

    def passes(self, level: int) -> bool:
        """The noise-free, full-length answer."""
        return self.score(level) <= 1.0

    @cached_property
    def _band(self) -> range:
        # Outside this band the ripple cannot change the answer.
        lo = max(1, int(self.capacity / (1 + self.wiggle)) - 2)
        hi = int(self.capacity / (1 - self.wiggle)) + 2 if self.wiggle < 1 else 10 * self.capacity
        return range(lo, hi + 1)

    @cached_property
    def truth_low(self) -> int:
        """The highest level below which every level passes (0 if level 1 fails)."""
        for level in self._band:
            if not self.passes(level):
                return level - 1
        return self._band[-1]

    @cached_property
    def truth_high(self) -> int:
        """The highest level that passes at all."""
        for level in reversed(self._band):
            if self.passes(level):
                return level
        return 0

    def verdict(self, level: int, duration: float, full: float, index: int) -> Verdict:
        rng = random.Random(self.seed * 1_000_003 + index)
        if rng.random() < self.stall:
            return Verdict.NOISY
        share = min(duration / full, 1.0)
        bar = 1.0 + self.probe_bias * (1.0 - share)
        if self.jitter:
            bar += rng.gauss(0.0, self.jitter / math.sqrt(share))
        if self.score(level) > bar:
            return Verdict.FAIL
        return Verdict.FAIL if rng.random() < self.false_fail else Verdict.PASS


@dataclass
class Run:
    finished: Finished
    history: list[StepRecord] = field(default_factory=list)

    @property
    def trial_seconds(self) -> float:
        return sum(record.duration for record in self.history)


def record(index: int, action: NextTrial, verdict: Verdict) -> StepRecord:
    return StepRecord(
        index=index,
        level=action.level,
        kind=action.kind,
        attempt=action.attempt,
        duration=action.duration,
        verdict=verdict,
        reasons=[] if verdict is Verdict.PASS else [f"simulated {verdict.value}"],
    )


def run(
    search: Search,
    trial: Trial,
    target: SimTarget,
    retries: int = 3,
    history: list[StepRecord] | None = None,
) -> Run:
    """Drive the search against the target until it finishes (bounded by max_trials)."""
    steps = list(history or [])
    for _ in range(search.max_trials + 1):
        action = next_action(search, trial, steps, retries=retries)
        if isinstance(action, Finished):
            return Run(action, steps)
        assert search.floor <= action.level <= search.limit or search.levels
        verdict = target.verdict(action.level, action.duration, trial.duration, len(steps))
        steps.append(record(len(steps), action, verdict))
    raise AssertionError(f"the search did not finish within max_trials ({search.max_trials})")
