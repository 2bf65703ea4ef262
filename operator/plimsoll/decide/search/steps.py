"""A fixed list of levels, each run once at full length and reported.

Called by `plimsoll.decide.search.next_action` for `strategy: steps`. The user names
every level, so the list is run in its own order, duplicates included, and a
failure does not stop it: the report shows each level's verdict, as a
capacity table does. Levels above `limit` are skipped and the answer says so.
The ceiling is the highest pass below the lowest failure, so a level that
failed is never reported even if a higher one happened to pass. A list whose
every level passed has no ceiling: the answer is "at least" its highest level,
not complete (`EVERY_LEVEL_PASSED`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.search.actions import CeilingEstimate, NextTrial
from plimsoll.decide.search.evidence import EVERY_LEVEL_PASSED, Evidence


def planned(search: Search) -> list[int]:
    return [level for level in search.levels or [] if level <= search.limit]


def propose(
    search: Search, trial: Trial, history: Sequence[StepRecord]
) -> NextTrial | CeilingEstimate:
    # One settled full-length step per entry of the list, in order.
    done = sum(
        1
        for record in history
        if record.kind is TrialKind.FULL and record.verdict in (Verdict.PASS, Verdict.FAIL)
    )
    levels = planned(search)
    if done < len(levels):
        return NextTrial(levels[done], TrialKind.FULL, trial.duration)
    if Evidence.of(history).full_high is None:
        answer = so_far(search, history, EVERY_LEVEL_PASSED)
        return dataclasses.replace(answer, every_level_passed=answer.level is not None)
    return so_far(search, history, "", complete=True)


def so_far(
    search: Search, history: Sequence[StepRecord], reason: str, complete: bool = False
) -> CeilingEstimate:
    evidence = Evidence.of(history)
    low = evidence.full_low
    skipped = [level for level in search.levels or [] if level > search.limit]
    if skipped:
        note = f"skipped levels above the limit ({search.limit}): {skipped}"
        reason = f"{reason}; {note}" if reason else note
    if low is None and complete and evidence.full_fail:
        reason = f"{reason}; no level passed" if reason else "no level passed"
    return evidence.estimate(low, evidence.full_high, reason, complete)
