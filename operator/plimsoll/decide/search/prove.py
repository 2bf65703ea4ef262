"""A proof run: one long full-length trial at the planned level, no search around it.

Called by `plimsoll.decide.search.next_action` for `strategy: prove`, and for `autoscale`
(a flight: one trial of the profile at its peak, `decide.flight_plan`). The question
is not "how high?" but "does the sized deployment hold its peak, with a zone taken
away?", so the answer is that one step: a pass makes `level` the ceiling, a fail
leaves none, and either way the search is complete (the run did what it was asked;
`plimsoll.decide.proof` says whether it held). `search.level` is set by the time it
runs: written by the user or planned from `spec.sizing` (`plimsoll.decide.proof_plan`).
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.search.actions import CeilingEstimate, NextTrial


class UnplannedProofError(ValueError):
    """A proof search with no level: `fromSizing` was not planned before the run."""


def _level(search: Search) -> int:
    if search.level is None:
        raise UnplannedProofError(
            "search.level was not planned before the run (a proof's from spec.sizing with "
            "search.fromSizing, a flight's from workload.profile)"
        )
    return search.level


def _settled(history: Sequence[StepRecord], level: int) -> list[Verdict]:
    """The pass or fail verdicts of full-length trials at `level`, oldest first."""
    settled = (Verdict.PASS, Verdict.FAIL)
    return [
        r.verdict
        for r in history
        if r.kind is TrialKind.FULL and r.level == level and r.verdict in settled
    ]


def propose(
    search: Search, trial: Trial, history: Sequence[StepRecord]
) -> NextTrial | CeilingEstimate:
    level = _level(search)
    if not _settled(history, level):
        return NextTrial(level, TrialKind.FULL, trial.duration)
    return so_far(search, history, "", complete=True)


def so_far(
    search: Search, history: Sequence[StepRecord], reason: str, complete: bool = False
) -> CeilingEstimate:
    level = _level(search)
    verdicts = _settled(history, level)
    if not verdicts:
        return CeilingEstimate(None, None, None, complete=False, stop_reason=reason)
    held = verdicts[-1] is Verdict.PASS
    return CeilingEstimate(
        level if held else None,
        level if held else None,
        None if held else level,
        complete=complete,
        stop_reason=reason,
        spread=(level,) if held else (),
    )
