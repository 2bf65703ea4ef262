"""How many trials one level may take, and what a level that used them all tells.

Called by `plimsoll.decide.search.next_action` before and after the strategy decides;
pure, read from the step history alone (`StepRecord`), so a resumed run counts the
same. A level (and kind of trial) may take `retries + 1` unsettled trials in all,
whatever their mix of noisy and marginal verdicts, counted over the whole history
and not only the latest run of repeats: a level judged pass, noisy, pass, noisy,
noisy, marginal, marginal, pass took eight trials where three would have told as
much (a real LLM proxy, issue 51). Settled trials (pass, fail) do not count: the
repeats that measure the spread are the search's own plan.

Attempt numbers count the trials at a level and kind, whatever they were judged:
the third trial at 150 rps is attempt 3, never "attempt 2" again after a verdict
changed.

A level whose trials ran out without a pass or a fail is:

- inconclusive when every one was noisy (the host stayed busy);
- marginal otherwise: its samples cannot tell whether it meets the bar, and the
  answer carries it as the ceiling's uncertainty ("about 150 rps: p99 total
  latency of all operations 143-158 ms around the 150 ms bar"), from the
  `StepRecord.marginal` figures of its attempts.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.step import StepRecord, TrialKind, Verdict

Key = tuple[int, TrialKind]

UNSETTLED = (Verdict.NOISY, Verdict.MARGINAL)
SETTLED = (Verdict.PASS, Verdict.FAIL)


def key_of(record: StepRecord) -> Key:
    return (record.level, record.kind)


def attempt(history: Sequence[StepRecord], key: Key) -> int:
    """The number the next trial at `key` gets: one more than the trials it had."""
    return 1 + sum(1 for r in history if key_of(r) == key)


def unsettled(history: Sequence[StepRecord], key: Key) -> list[StepRecord]:
    return [r for r in history if key_of(r) == key and r.verdict in UNSETTLED]


def settled(history: Sequence[StepRecord], key: Key) -> bool:
    return any(key_of(r) == key and r.verdict in SETTLED for r in history)


def spent(history: Sequence[StepRecord], key: Key, retries: int) -> bool:
    """`key` took all the unsettled trials a level may take."""
    return len(unsettled(history, key)) > retries


def stayed_marginal(history: Sequence[StepRecord], retries: int) -> dict[Key, int]:
    """Levels (and kinds) that spent their trials with no pass or fail and at least one
    marginal verdict: how many trials each took."""
    stayed: dict[Key, int] = {}
    for key in dict.fromkeys(key_of(r) for r in history):
        tried = unsettled(history, key)
        if (
            len(tried) > retries
            and not settled(history, key)
            and any(r.verdict is Verdict.MARGINAL for r in tried)
        ):
            stayed[key] = len(tried)
    return stayed


def uncertainty(history: Sequence[StepRecord], key: Key) -> str:
    """The marginal level as the ceiling's uncertainty: "about 150: p99 ... 143-158 ms
    around the 150 ms bar", from its attempts' figures (its level alone without them)."""
    level = key[0]
    figures = [r.marginal for r in history if key_of(r) == key and r.marginal is not None]
    if not figures:
        return f"about {level:,}"
    first = figures[0]
    same = [f.measured for f in figures if f.criterion == first.criterion]
    low, high = min(same), max(same)
    unit = f" {first.unit}" if first.unit else ""
    span = _number(low) if low == high else f"{_number(low)}–{_number(high)}"
    bar = f"{_number(first.bound)}{unit}"
    return f"about {level:,}: {first.criterion} {span}{unit} around the {bar} bar"


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"
