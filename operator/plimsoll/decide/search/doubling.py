"""The classic capacity search: double until a step fails, bisect, repeat the best for the spread.

Called by `plimsoll.decide.search.next_action` for `strategy: doubling`. Every trial is
full length. The rules:

1. start at `start`; while steps pass, double (capped at `limit`);
2. if the first step fails, halve instead, down to `floor`;
3. bisect between the last pass and the first fail until first fail / last pass
   is at most 1 + `precision` (or the two are adjacent integers);
4. repeat the highest passing level `repeats` more times for the spread.

Decisions come from `Evidence` (what each level did), not from the order of the
steps, so the same rules cover resumption. Flips: a level that passed and
later failed (typically during the repeats) counts as failed, because a
ceiling is never a level that failed at full length; the bracket drops below
it and bisection or the repeats continue from the highest level that has only
passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import StepRecord, TrialKind
from plimsoll.decide.search.actions import CeilingEstimate, NextTrial
from plimsoll.decide.search.evidence import Evidence, narrow, repeat_then_stop


def propose(
    search: Search, trial: Trial, history: Sequence[StepRecord]
) -> NextTrial | CeilingEstimate:
    evidence = Evidence.of(history)
    low, high = evidence.full_low, evidence.full_high
    level = narrow(low, high, search)
    if level is not None:
        return NextTrial(level, TrialKind.FULL, trial.duration)
    if low is None:
        return so_far(search, history, f"even the floor ({search.floor}) failed")
    return repeat_then_stop(search, trial, evidence, low, high, partial(so_far, search, history))


def so_far(
    search: Search, history: Sequence[StepRecord], reason: str, complete: bool = False
) -> CeilingEstimate:
    """The range found so far: the answer of a finished run, or of one stopped early."""
    evidence = Evidence.of(history)
    return evidence.estimate(evidence.full_low, evidence.full_high, reason, complete)
