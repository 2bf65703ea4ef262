"""Keep `status.steps` small: recent steps in full, older ones in brief, no PromQL.

The status lives in etcd (an object is refused past ~1.5 MiB) and is read by
`kubectl get` on every refresh, while a run may take hundreds of steps whose
reasons can quote long PromQL. So the operator writes `compact_steps(records)`
instead of the records themselves:

- every reason loses its `(query: ...)` part (the queries stay in the report,
  whose step results carry them in full) and is cut to `REASON_CHARS`, with at
  most `MAX_REASONS` per step;
- all but the last `keep_full` steps are summarized: the figures (quantiles,
  rates, CPU, memory, start time) are dropped, and only an invalid step keeps a
  reason (the search quotes it when it stops). What the search reads (variant,
  index, level, kind, attempt, verdict) is never dropped, so a run resumed from
  the compacted status takes the same decisions as one that never stopped.

Compacting is idempotent: a compacted list compacts to itself.

The status must also stay under etcd's limit whatever the spec asks (16 variants of
500 trials came to about 2.1 MB, which etcd refuses, and the run could never write
its status again): a run takes at most `MAX_STATUS_STEPS` steps in all, after which
each variant stops with the range it found (`plimsoll.run.variant`). A brief step
is at most about 1 KB of JSON (its 120-character reason escaped to six bytes a
character), a full one about 8 KB, so the steps stay below `STATUS_STEPS_BUDGET`
(a test holds that figure with the worst records).
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.step import StepRecord, Verdict

KEEP_FULL = 20
MAX_STATUS_STEPS = 1000  # in all, over every variant of a run
STATUS_STEPS_BUDGET = 1_200_000  # bytes of status.steps; etcd refuses an object past 1.5 MiB
REASON_CHARS = 240
BRIEF_REASON_CHARS = 120
MAX_REASONS = 6
_QUERY = "(query: "


def without_queries(reason: str) -> str:
    """`reason` with each `(query: ...)` part removed (parentheses inside a query balanced)."""
    out: list[str] = []
    rest = reason
    while (start := rest.find(_QUERY)) >= 0:
        out.append(rest[:start].rstrip())
        depth, end = 0, len(rest)
        for position in range(start, len(rest)):
            if rest[position] == "(":
                depth += 1
            elif rest[position] == ")":
                depth -= 1
                if depth == 0:
                    end = position + 1
                    break
        rest = rest[end:]
    out.append(rest)
    return "".join(out)


def short_reason(reason: str, limit: int = REASON_CHARS) -> str:
    text = without_queries(reason)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _shortened(reasons: Sequence[str], limit: int, count: int) -> list[str]:
    """At most `count` reasons, the last saying how many more there were; a list already
    short enough keeps its length, so shortening twice changes nothing."""
    if len(reasons) <= count:
        return [short_reason(r, limit) for r in reasons]
    kept = [short_reason(r, limit) for r in reasons[: count - 1]]
    return [*kept, f"and {len(reasons) - len(kept)} more (see the report)"]


def full_record(record: StepRecord) -> StepRecord:
    """A recent step: every figure, the reasons without queries and cut to length."""
    if record.summarized:
        return record
    return record.model_copy(
        update={"reasons": _shortened(record.reasons, REASON_CHARS, MAX_REASONS)}
    )


def brief_record(record: StepRecord) -> StepRecord:
    """An older step: what the search needs, and one reason if it was invalid."""
    reasons = (
        [short_reason(record.reasons[0], BRIEF_REASON_CHARS)]
        if record.verdict is Verdict.INVALID and record.reasons
        else []
    )
    return StepRecord(
        index=record.index,
        level=record.level,
        variant=record.variant,
        kind=record.kind,
        attempt=record.attempt,
        duration=round(record.duration, 1),
        verdict=record.verdict,
        reasons=reasons,
        floor_ms=record.floor_ms,  # the derived floor bound is read from the first steps
        busy=record.busy,
        marginal=record.marginal,  # the answer's uncertainty is read from it on resume
        summarized=True,
    )


def compact_steps(records: Sequence[StepRecord], keep_full: int = KEEP_FULL) -> list[StepRecord]:
    """The list to write to `status.steps`, oldest first."""
    split = max(0, len(records) - keep_full)
    return [brief_record(r) for r in records[:split]] + [full_record(r) for r in records[split:]]
