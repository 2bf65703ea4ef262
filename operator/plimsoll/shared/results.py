"""Merging trial results from several generator processes or pods into one.

Counts add, histograms (and timelines, slice by slice) merge exactly, the
measured window is the longest of them, and the saturation signal keeps the
busiest generator: one saturated process is enough to make a step untrustworthy.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.trial import (
    FloorResult,
    OperationResult,
    Outcomes,
    StreamHealth,
    TrialResult,
    TrialState,
)
from plimsoll.shared import histogram
from plimsoll.shared.timeline import merge_timelines

_MAX_ERROR_SAMPLES = 20
# The trial figures that are counts or amounts of the whole: the parts' add up.
_ADDED = (
    "level",
    "nominal",
    "intended",
    "sent",
    "sent_on_time",
    "dropped_starts",
    "page_views",
    "bot_requests",
    "cpu_seconds",
    "cores",
    "bytes_in",
    "bytes_out",
    "generators",
)


def _merge_encoded(items: Sequence[str | None]) -> str | None:
    present = [item for item in items if item]
    if not present:
        return None
    if len(present) == 1:
        return present[0]
    return histogram.encode(histogram.merge(present))


def _sum_known(values: Sequence[float | None]) -> float | None:
    """The total, or None when any part could not be read (a partial sum would mislead)."""
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def _sum_known_int(values: Sequence[int | None]) -> int | None:
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def _merge_operations(results: Sequence[TrialResult]) -> dict[str, OperationResult]:
    """Each operation's figures over every generator: histograms merged, counts added."""
    operations: dict[str, OperationResult] = {}
    for name in sorted({name for r in results for name in r.operations}):
        parts = [r.operations[name] for r in results if name in r.operations]
        outcomes = Outcomes()
        for part in parts:
            outcomes = outcomes + part.outcomes
        latency = _merge_encoded([p.latency for p in parts])
        operations[name] = OperationResult(
            latency=latency or histogram.encode(histogram.new_histogram()),
            ttft=_merge_encoded([p.ttft for p in parts]),
            added=_merge_encoded([p.added for p in parts]),
            outcomes=outcomes,
            good=_sum_known_int([p.good for p in parts]),
        )
    return operations


def merge_results(results: Sequence[TrialResult], trial_id: str) -> TrialResult:
    """One trial's result from every generator's share of it."""
    if not results:
        raise ValueError("no trial results to merge")
    states = {r.state for r in results}
    state = TrialState.DONE
    for worst in (TrialState.FAILED, TrialState.ABORTED, TrialState.RUNNING):
        if worst in states:
            state = worst
            break

    operations = _merge_operations(results)
    floors = [r.floor for r in results if r.floor is not None]
    floor = (
        FloorResult(
            latency=_merge_encoded([f.latency for f in floors]),
            count=sum(f.count for f in floors),
            errors=sum(f.errors for f in floors),
        )
        if floors
        else None
    )
    # Every stream figure is a count: each adds.
    streams = StreamHealth(
        **{
            name: sum(getattr(r.streams, name) for r in results)
            for name in StreamHealth.model_fields
        }
    )
    errors: list[str] = []
    for r in results:
        errors.extend(r.errors[: _MAX_ERROR_SAMPLES - len(errors)])
    return TrialResult(
        id=trial_id,
        state=state,
        operations=operations,
        streams=streams,
        floor=floor,
        late_tolerance=max(r.late_tolerance for r in results),
        start_lag=_merge_encoded([r.start_lag for r in results]),
        measured_seconds=max(r.measured_seconds for r in results),
        started_late_seconds=max(r.started_late_seconds for r in results),
        cpu_wait_seconds=_sum_known([r.cpu_wait_seconds for r in results]),
        cpu_timeslices=_sum_known_int([r.cpu_timeslices for r in results]),
        host_steal_share=max(
            (r.host_steal_share for r in results if r.host_steal_share is not None),
            default=None,
        ),
        peak_cpu_fraction=max(max(r.peak_cpu_fraction, r.cpu_fraction) for r in results),
        errors=errors,
        timeline=merge_timelines([r.timeline for r in results]),
        **{name: sum(getattr(r, name) for r in results) for name in _ADDED},
    )
