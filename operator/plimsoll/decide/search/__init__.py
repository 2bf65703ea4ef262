"""The ceiling search: from the spec and the step history to the next trial or the answer.

The runner calls `next_action(spec.search, spec.trial, steps, retries=spec.noise.retries)`
before every trial with the steps of one variant so far, oldest first, and
runs what it returns until it returns `Finished`. It is a pure function of
its arguments (no clock, no I/O, no state kept between calls; an import-linter
contract holds it to that), so a run resumed from any prefix of
`status.steps` makes the same decisions as one that never stopped.

Rules shared by every strategy, applied here before the strategy decides:

- an invalid step stops the run: the answer is the range found so far, with
  the step's reasons;
- a noisy step is repeated at the same level and kind, `attempt` counting up;
  after `retries` repeats that were all noisy (`retries + 1` noisy attempts in
  a row) the run stops *inconclusive*: the host was busy, and the answer is
  the range found so far, marked so that nobody reads it as a ceiling.
  `retries` is a parameter, normally `spec.noise.retries`; `retries=2` is the
  classic "noisy three times";
- a marginal step (a criterion's confidence interval straddles its bound) is
  repeated like a noisy one, up to `retries` times; a level that stays marginal
  (`retries + 1` marginal attempts in a row) moves neither end of the answer's
  bracket, but the search goes on below it: the strategy chooses its next levels
  as if that level had failed (a doubling climb that stays marginal at 200 after
  a pass at 100 bisects 150, 175, ... instead of stopping with 100), and when it
  has nothing left to try the answer is read from the history itself, so the
  first failure stays the real one and the answer says which level stayed
  marginal. A level that stayed marginal below a higher level that passed (of the
  same kind, and below every failure of that kind) is not read as failed and does
  not end the search: the pass above it says the target carries it, so the strategy
  reads it as passed and goes on from the pass above;
- `search.max_trials` bounds the number of trials, noisy repeats and probes
  included; at the bound the run stops with the range so far.

The strategies (`steps`, `doubling`, `probe`, `prove`) live in their own modules and
see only pass and fail verdicts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from plimsoll.api.spec import Noise, Search, Strategy, Trial
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.search import doubling, probe, prove, steps
from plimsoll.decide.search import level_budget as budget
from plimsoll.decide.search.actions import CeilingEstimate, Finished, NextTrial

__all__ = [
    "INCONCLUSIVE",
    "CeilingEstimate",
    "Finished",
    "NextTrial",
    "next_action",
    "noise_free_bound",
]

INCONCLUSIVE = "inconclusive: the host was busy"

DEFAULT_RETRIES: int = Noise.model_fields["retries"].default

_Propose = Callable[[Search, Trial, Sequence[StepRecord]], NextTrial | CeilingEstimate]
_SoFar = Callable[[Search, Sequence[StepRecord], str], CeilingEstimate]

_STRATEGIES: dict[Strategy, tuple[_Propose, _SoFar]] = {
    Strategy.STEPS: (steps.propose, steps.so_far),
    Strategy.DOUBLING: (doubling.propose, doubling.so_far),
    Strategy.PROBE: (probe.propose, probe.so_far),
    Strategy.PROVE: (prove.propose, prove.so_far),
    # A flight is one long trial at its planned level (the profile's peak), as a proof.
    Strategy.AUTOSCALE: (prove.propose, prove.so_far),
}


def next_action(
    search: Search,
    trial: Trial,
    history: Sequence[StepRecord],
    *,
    retries: int = DEFAULT_RETRIES,
) -> NextTrial | Finished:
    """The next trial to run, or the final answer, for this history of one variant."""
    propose, so_far = _STRATEGIES[search.strategy]
    for record in history:
        if record.verdict is Verdict.INVALID:
            why = "; ".join(record.reasons) or "no reason given"
            return Finished(so_far(search, history, f"{_name(record)} was invalid: {why}"))
    retry = _retry_of_last(search, trial, history, retries, so_far)
    action = (
        retry
        if retry is not None
        else _strategy_asks(search, trial, history, retries, propose, so_far)
    )
    if isinstance(action, Finished):
        return action
    if isinstance(action, CeilingEstimate):
        return Finished(action)
    if len(history) >= search.max_trials:
        why = f"reached max_trials ({search.max_trials}) before the ceiling was narrowed"
        return Finished(so_far(search, history, why))
    return action


def _retry_of_last(
    search: Search, trial: Trial, history: Sequence[StepRecord], retries: int, so_far: _SoFar
) -> NextTrial | Finished | None:
    """The last step's level again while it is unsettled (noisy or marginal) and has
    trials left; an inconclusive answer once a level stayed noisy through all of them;
    None when the strategy decides."""
    last = history[-1] if history else None
    if last is None or last.verdict not in budget.UNSETTLED:
        return None
    key = budget.key_of(last)
    tried = budget.unsettled(history, key)
    if len(tried) <= retries:
        duration = _duration(search, trial, last.kind)
        return NextTrial(last.level, last.kind, duration, _attempt(history, key))
    if not budget.settled(history, key) and all(r.verdict is Verdict.NOISY for r in tried):
        why = f"{INCONCLUSIVE} ({_name(last)} was noisy {len(tried)} times: {_bound(retries)})"
        busy = so_far(search, history, why)
        return Finished(dataclasses.replace(busy, inconclusive=True))
    return None


def _strategy_asks(
    search: Search,
    trial: Trial,
    history: Sequence[StepRecord],
    retries: int,
    propose: _Propose,
    so_far: _SoFar,
) -> NextTrial | CeilingEstimate | Finished:
    """What the strategy proposes, with levels that stayed marginal read as settled; an
    answer instead where it asks again for a level whose trials are spent."""
    stayed = budget.stayed_marginal(history, retries)
    carried = {key for key in stayed if _carried(history, *key)}
    stayed = {key: count for key, count in stayed.items() if key not in carried}
    action = propose(search, trial, _marginal_settled(history, stayed, carried))
    asked = (action.level, action.kind) if isinstance(action, NextTrial) else None
    if stayed and (asked in stayed or isinstance(action, CeilingEstimate)):
        levels = "; ".join(
            f"{budget.uncertainty(history, key)} ({count} trials)" for key, count in stayed.items()
        )
        why = (
            f"stayed marginal: {levels}; its samples cannot tell whether it meets the "
            f"bar, so the levels below it were narrowed instead ({_bound(retries)})"
        )
        estimate = so_far(search, history, why)
        return Finished(dataclasses.replace(estimate, complete=estimate.level is not None))
    if asked is not None and budget.spent(history, asked, retries):
        # A settled level the strategy asks again (a repeat for the spread) after it
        # spent its unsettled trials: the answer stands on the repeats it has.
        why = (
            f"level {asked[0]:,} took {len(budget.unsettled(history, asked))} noisy or "
            f"marginal trials ({_bound(retries)}): the spread has fewer repeats"
        )
        estimate = so_far(search, history, why)
        done = estimate.level is not None and estimate.high is not None
        return Finished(dataclasses.replace(estimate, complete=done))
    if isinstance(action, NextTrial):
        return dataclasses.replace(action, attempt=_attempt(history, (action.level, action.kind)))
    return action


def noise_free_bound(search: Search) -> int:
    """The most trials a run can take when no step is noisy and every verdict is repeatable.

    `steps`: its list. `doubling`: the climb or the halving (at most
    log(limit / floor) to the base `factor`, + 1 levels), the bisection (at most log2(1 / precision)
    + 2, integer rounding included) and the repeats. `probe`: the same number of
    trials, most of them short, plus the two full-length confirmations. The
    property tests hold the search to it; `max_trials` caps every run anyway.
    """
    if search.strategy is Strategy.STEPS:
        return len(steps.planned(search))
    if search.strategy is Strategy.PROVE:
        return 1
    climb = math.ceil(math.log(search.limit / search.floor, search.factor)) + 1
    bisect = math.ceil(math.log2(1.0 / search.precision)) + 2
    extra = 2 if search.strategy is Strategy.PROBE else 0
    return climb + bisect + search.repeats + extra


def _duration(search: Search, trial: Trial, kind: TrialKind) -> float:
    return trial.duration if kind is TrialKind.FULL else probe.probe_duration(search, trial)


def _carried(history: Sequence[StepRecord], level: int, kind: TrialKind) -> bool:
    """A higher level of this kind passed, below every level of this kind that failed:
    the target carries `level`, whatever its own samples could not tell."""
    same = [r for r in history if r.kind is kind]
    lowest_fail = min((r.level for r in same if r.verdict is Verdict.FAIL), default=None)
    return any(
        r.verdict is Verdict.PASS
        and r.level > level
        and (lowest_fail is None or r.level < lowest_fail)
        for r in same
    )


def _marginal_settled(
    history: Sequence[StepRecord],
    stayed: dict[tuple[int, TrialKind], int],
    carried: set[tuple[int, TrialKind]],
) -> list[StepRecord]:
    """The history as the strategy chooses its next level from: a level that stayed
    marginal reads as one failure, so the climb or bisection goes on below it, or as one
    pass where a higher level passed (`carried`); its other unsettled trials are left
    out (a list of levels counts it as one entry). The answer is read from the real
    history."""
    last: dict[tuple[int, TrialKind], int] = {}
    for i, r in enumerate(history):
        if r.verdict in budget.UNSETTLED:
            last[budget.key_of(r)] = i
    view = []
    for i, r in enumerate(history):
        key = budget.key_of(r)
        if r.verdict not in budget.UNSETTLED or (key not in stayed and key not in carried):
            view.append(r)
        elif last[key] == i:
            verdict = Verdict.PASS if key in carried else Verdict.FAIL
            view.append(r.model_copy(update={"verdict": verdict}))
    return view


def _attempt(history: Sequence[StepRecord], key: tuple[int, TrialKind]) -> int:
    return budget.attempt(history, key)


def _bound(retries: int) -> str:
    return f"the bound is {retries + 1} noisy or marginal trials a level, noise.retries + 1"


def _name(record: StepRecord) -> str:
    kind = "probe" if record.kind is TrialKind.PROBE else "step"
    return f"{kind} {record.index} at level {record.level}"
