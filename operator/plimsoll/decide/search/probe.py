"""The fast search: short probe trials narrow the bracket, full-length trials confirm it.

Called by `plimsoll.decide.search.next_action` for `strategy: probe`. The doubling
search spends a full-length trial on every level, although most of them (the
climb, the early bisections) are far from the ceiling and would be decided by
a much shorter trial. Like RFC 2544 / MLRsearch throughput searches, this one
measures with short trials while the bracket is wide and spends full-length
trials only where the answer is decided:

1. probe (`search.probe_duration`, default a fifth of `trial.duration`) with
   the doubling rules (double, halve, bisect) until the bracket between the
   highest pass and the lowest credible failure is within `precision`;
2. confirm its low end with a full-length trial; if that fails, the level is a
   full-length failure and step 1 resumes below it;
3. confirm its high end with a full-length trial when only a probe failed
   there, so a pessimistic probe cannot pull the ceiling down; if it passes,
   it becomes a full-length pass and the search climbs again from it;
4. repeat the confirmed level `repeats` more times for the spread.

What counts as credible, and how flips are handled:

- a full-length result outranks any probe: probe failures at or below the
  highest full-length pass are ignored, and probe passes at or above the
  lowest full-length failure are ignored;
- a level that passed and later failed at full length (a flip, usually during
  the repeats) is a failure: the reported ceiling is never a level that failed
  at full length, so the bracket drops below it and the search goes on;
- a level that passed a probe and failed at full length is the same case: the
  probes were optimistic there, and the full-length failure bounds the bracket.

Every trial it asks for adds a fact the bracket did not have, so it ends; with
no noise it needs at most two trials more than `doubling` needs full-length
ones (the two confirmations), most of them short.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import StepRecord, TrialKind
from plimsoll.decide.search.actions import CeilingEstimate, NextTrial
from plimsoll.decide.search.evidence import Evidence, narrow, repeat_then_stop

PROBE_FRACTION = 0.2  # of a full trial, when `search.probe_duration` is not set


def probe_duration(search: Search, trial: Trial) -> float:
    if search.probe_duration is not None and search.probe_duration > 0:
        return min(search.probe_duration, trial.duration)
    return trial.duration * PROBE_FRACTION


def bracket(evidence: Evidence) -> tuple[int | None, int | None]:
    """(highest credible pass, lowest credible failure), probes and full trials together."""
    full_low, full_high = evidence.full_low, evidence.full_high
    fails = set(evidence.full_fail)
    fails.update(
        level
        for level in evidence.probe_fail
        if (full_low is None or level > full_low) and level not in evidence.full_pass
    )
    high = min(fails, default=None)
    passes = set(evidence.full_pass).union(evidence.probe_pass)
    low = max((lv for lv in passes if high is None or lv < high), default=None)
    assert full_high is None or high is None or high <= full_high
    return low, high


def propose(
    search: Search, trial: Trial, history: Sequence[StepRecord]
) -> NextTrial | CeilingEstimate:
    evidence = Evidence.of(history)
    low, high = bracket(evidence)
    level = narrow(low, high, search)
    if level is not None:
        return NextTrial(level, TrialKind.PROBE, probe_duration(search, trial))
    if low is None:
        assert high is not None
        if high not in evidence.full_fail:
            return NextTrial(high, TrialKind.FULL, trial.duration)
        return so_far(search, history, f"even the floor ({search.floor}) failed")
    if low not in evidence.full_pass:
        return NextTrial(low, TrialKind.FULL, trial.duration)
    if high is not None and high not in evidence.full_fail:
        return NextTrial(high, TrialKind.FULL, trial.duration)
    return repeat_then_stop(search, trial, evidence, low, high, partial(so_far, search, history))


def so_far(
    search: Search, history: Sequence[StepRecord], reason: str, complete: bool = False
) -> CeilingEstimate:
    """The range found so far. Only a full-length pass is ever reported as the level."""
    evidence = Evidence.of(history)
    level = evidence.full_low
    _, high = bracket(evidence)
    probed = max(evidence.probe_pass, default=None)
    if level is None and probed is not None and not complete:
        reason += f" (probes passed up to {probed}, unconfirmed at full length)"
    return evidence.estimate(level, high, reason.strip(), complete)
