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

    noisy = _tail(history, Verdict.NOISY)
    marginal = _tail(history, Verdict.MARGINAL)
    if marginal and len(marginal) <= retries:
        last = marginal[-1]
        action: NextTrial | CeilingEstimate = NextTrial(
            last.level, last.kind, _duration(search, trial, last.kind), len(marginal) + 1
        )
    elif noisy:
        last = noisy[-1]
        if len(noisy) > retries:
            why = f"{INCONCLUSIVE} ({_name(last)} was noisy {len(noisy)} times in a row)"
            busy = so_far(search, history, why)
            return Finished(dataclasses.replace(busy, inconclusive=True))
        action = NextTrial(
            last.level, last.kind, _duration(search, trial, last.kind), len(noisy) + 1
        )
    else:
        stayed = _stayed_marginal(history, retries)
        carried = {key for key in stayed if _carried(history, *key)}
        stayed = {key: count for key, count in stayed.items() if key not in carried}
        action = propose(search, trial, _marginal_settled(history, stayed, carried))
        asks_again = isinstance(action, NextTrial) and (action.level, action.kind) in stayed
        if stayed and (asks_again or isinstance(action, CeilingEstimate)):
            levels = ", ".join(f"{level} ({count} times)" for (level, _), count in stayed.items())
            why = (
                f"stayed marginal: {levels}; its samples cannot tell whether it meets the "
                "bar, so the levels below it were narrowed instead"
            )
            estimate = so_far(search, history, why)
            return Finished(dataclasses.replace(estimate, complete=estimate.level is not None))
    if isinstance(action, CeilingEstimate):
        return Finished(action)
    if len(history) >= search.max_trials:
        why = f"reached max_trials ({search.max_trials}) before the ceiling was narrowed"
        return Finished(so_far(search, history, why))
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


def _stayed_marginal(
    history: Sequence[StepRecord], retries: int
) -> dict[tuple[int, TrialKind], int]:
    """Levels (and kinds) judged marginal more than `retries` times in a row: how many."""
    stayed: dict[tuple[int, TrialKind], int] = {}
    key: tuple[int, TrialKind] | None = None
    count = 0
    for record in history:
        if record.verdict is not Verdict.MARGINAL:
            key, count = None, 0
            continue
        here = (record.level, record.kind)
        count = count + 1 if here == key else 1
        key = here
        if count > retries:
            stayed[here] = max(stayed.get(here, 0), count)
    return stayed


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
    """The history as the strategy chooses its next level from: each attempt at a level
    that stayed marginal reads as a failure, so the climb or bisection goes on below it,
    or as a pass where a higher level passed (`carried`), once per run of attempts (a
    list of levels counts it as one entry); the answer itself is read from the real
    history."""
    settled = []
    for i, r in enumerate(history):
        key = (r.level, r.kind)
        if r.verdict is not Verdict.MARGINAL or (key not in carried and key not in stayed):
            settled.append(r)
            continue
        after = history[i + 1] if i + 1 < len(history) else None
        if (
            after is not None
            and after.verdict is Verdict.MARGINAL
            and (
                after.level,
                after.kind,
            )
            == key
        ):
            continue  # one settled attempt per run of repeats, as a pass or fail would be
        verdict = Verdict.PASS if key in carried else Verdict.FAIL
        settled.append(r.model_copy(update={"verdict": verdict}))
    return settled


def _tail(history: Sequence[StepRecord], verdict: Verdict) -> list[StepRecord]:
    """The attempts judged `verdict` at the end of the history, all of the same level and
    kind."""
    tail: list[StepRecord] = []
    for record in reversed(history):
        if record.verdict is not verdict:
            break
        if tail and (record.level, record.kind) != (tail[0].level, tail[0].kind):
            break
        tail.insert(0, record)
    return tail


def _name(record: StepRecord) -> str:
    kind = "probe" if record.kind is TrialKind.PROBE else "step"
    return f"{kind} {record.index} at level {record.level}"
