"""When a variant's search retries a step, and what it reports when it stops early,
decided from the step history alone, so a run resumed from its status takes the same
decisions as the original (issue 53: the retry count was a variable of the loop, and a
run resumed after an invalid step stopped where the original would have retried).

- An invalid step (a generator crashed, the mock died) is tried once more; a second
  invalid attempt in a row stops the search, unless the retry would run on more
  generators (`generators.replicas: auto` after a saturated step), which the caller
  knows from the equipment and passes in.
- While a retry is pending the search does not see the attempt it retries; once an
  invalid step is retried, its retry stands for it.
- A variant stopped outside the search (the target died, too many trials) reports the
  range its full-length steps show: a probe's pass is a short trial's and never the
  ceiling, as in the search's own rule (`evidence`).
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepRecord, Verdict
from plimsoll.decide.search.evidence import Evidence


def searchable(records: Sequence[StepRecord]) -> list[StepRecord]:
    """The history the search sees: an invalid step that was retried is left out (its retry
    stands for it)."""
    kept = []
    for position, record in enumerate(records):
        retried = any(
            later.level == record.level and later.attempt > record.attempt
            for later in records[position + 1 :]
        )
        if record.verdict is Verdict.INVALID and retried:
            continue
        kept.append(record)
    return kept


def invalid_in_a_row(records: Sequence[StepRecord]) -> int:
    """How many invalid attempts end the history, all at the last step's level and kind."""
    if not records:
        return 0
    last = records[-1]
    count = 0
    for record in reversed(records):
        same = record.level == last.level and record.kind is last.kind
        if record.verdict is not Verdict.INVALID or not same:
            break
        count += 1
    return count


def pending_retries(records: Sequence[StepRecord], retry_on_more_generators: bool) -> int:
    """The invalid attempts the next trial retries (0: none pending, the search decides
    from everything). The first is always retried; later ones only on more generators."""
    invalid = invalid_in_a_row(records)
    if invalid == 1 or (invalid > 1 and retry_on_more_generators):
        return invalid
    return 0


def search_view(records: Sequence[StepRecord], pending: int) -> list[StepRecord]:
    """What the search decides the next trial from. While an invalid step awaits its retry
    the search must not see it yet, nor the invalid attempts it retries: a saturated
    step's second retry (on more generators again) came after two invalid attempts, and
    hiding only the last one let the first stop the search."""
    searched = searchable(records)
    return searched[:-1] if pending else searched


def range_so_far(records: Sequence[StepRecord], unit: str, variant: str, reason: str) -> Ceiling:
    """The range the full-length steps so far show, for a variant that stopped before the
    search did: the search's own reading of them (`Evidence`), with the stop's reason."""
    evidence = Evidence.of(records)
    low, high = evidence.full_low, evidence.full_high
    return Ceiling(
        level=low, unit=unit, low=low, high=high, complete=False, stop_reason=reason,
        variant=variant,
    )  # fmt: skip
