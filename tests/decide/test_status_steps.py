"""`compact_steps`: reasons without PromQL, older steps in brief, and idempotent."""

from __future__ import annotations

import json

from plimsoll.api.step import StepRecord, Verdict
from plimsoll.decide.status_steps import KEEP_FULL, compact_steps, short_reason, without_queries


def test_queries_are_cut_with_their_nested_parentheses() -> None:
    reason = (
        'server metrics missing: cpu: no data (query: sum(rate(x{a="(b)"}[1m]))); '
        "memory: timeout (query: max(y))"
    )
    assert without_queries(reason) == "server metrics missing: cpu: no data; memory: timeout"
    assert without_queries("unbalanced (query: sum(rate(x") == "unbalanced"
    assert without_queries("no query here") == "no query here"


def test_long_reasons_are_cut_with_an_ellipsis() -> None:
    assert len(short_reason("x" * 1000)) == 240
    assert short_reason("x" * 1000).endswith("…")


def _record(index: int, verdict: Verdict = Verdict.PASS) -> StepRecord:
    return StepRecord(
        index=index,
        level=10 * (index + 1),
        duration=30.04,
        verdict=verdict,
        reasons=[f"why {n} (query: up)" for n in range(9)],
        p99_ms=4.2,
        cpu_cores=0.5,
    )


def test_older_steps_are_brief_recent_ones_full_and_compacting_is_idempotent() -> None:
    records = [_record(i, Verdict.INVALID if i == 0 else Verdict.FAIL) for i in range(30)]
    compacted = compact_steps(records)
    brief, full = compacted[:-KEEP_FULL], compacted[-KEEP_FULL:]
    assert len(brief) == 10
    assert brief[0].summarized
    assert brief[0].reasons == ["why 0"]
    assert brief[1].reasons == []
    assert brief[1].p99_ms is None
    assert [(r.index, r.level, r.verdict) for r in compacted] == [
        (r.index, r.level, r.verdict) for r in records
    ]
    assert full[0].p99_ms == 4.2
    assert full[0].summarized is None
    assert full[0].reasons[:2] == ["why 0", "why 1"]
    assert full[0].reasons[-1].startswith("and 4")
    assert compact_steps(compacted) == compacted


def _worst(index: int) -> StepRecord:
    """The largest record a step can make: every figure set, a 63-character variant
    name, six reasons of non-ASCII text (six bytes a character once JSON-escaped)."""
    names = ("p50_ms", "p95_ms", "p99_ms", "added_p99_ms", "error_rate", "achieved_rate")
    names += ("cpu_cores", "throttled_ratio", "floor_ms", "nominal")
    figures = dict.fromkeys(names, 123456.789012)
    return StepRecord(
        index=index,
        level=2**31,
        variant="v" * 63,
        duration=86400.123,
        verdict=Verdict.INVALID,
        reasons=["é" * 1000] * 9,
        memory_bytes=2**46,
        scheduled=2**31,
        sent_on_time=2**31,
        generators=256,
        **figures,
    )


def test_the_most_steps_a_run_takes_stay_under_the_status_budget() -> None:
    """Issue 52: 8,000 steps came to about 2.1 MB, past etcd's limit. A run stops at
    MAX_STATUS_STEPS (`plimsoll.run.variant`), which even the worst records keep below
    the budget, itself below etcd's 1.5 MiB."""
    from plimsoll.decide.status_steps import MAX_STATUS_STEPS, STATUS_STEPS_BUDGET

    steps = compact_steps([_worst(i) for i in range(MAX_STATUS_STEPS)])
    written = json.dumps([s.to_wire() for s in steps])  # as the status writer sends them
    assert len(written) <= STATUS_STEPS_BUDGET < 1.5 * 2**20, len(written)
