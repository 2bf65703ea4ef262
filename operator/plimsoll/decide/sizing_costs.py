"""Which cost sizing uses, and where it came from: a flag, the report, or `spec.sizing`.

A flag wins (the user said so on the command line); otherwise the report's own
measurement of the planned variant; otherwise the fallback in `spec.sizing`. The
report measures: the per-pod ceiling (the variant's), memory per held stream
(the streams probe), memory per call in flight (the slope of the target's memory
over the calls in flight at the passing steps, by Little's law the achieved rate
× the mean latency), memory per modeled user (the per-unit costs' slope), and,
when `spec.sizing.store` names the `metrics.extra` series, store calls per
request, store CPU per call and bytes per key (their mean over the passing steps).
Each resolved cost's source goes into `SizingInput.sources`, so the plan can say
which figure was measured and which was supplied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plimsoll.api.run_record import RunRecord
from plimsoll.api.sizing import SizingInput, SizingSpec, StoreSizing
from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepResult, Verdict
from plimsoll.api.unit_cost import UnitCost
from plimsoll.decide.headline import headline_ceiling
from plimsoll.decide.unit_costs import least_squares_slope
from plimsoll.shared.histogram import decode

STORE_COSTS = ("calls_per_request", "cpu_per_call", "bytes_per_key")
POD_COSTS = ("memory_per_stream", "memory_per_in_flight", "memory_per_user", "pod_memory")


class SizingInputError(ValueError):
    """The report and flags do not give sizing what it needs; the message says which."""


def _ceiling(report: RunRecord, variant: str | None) -> Ceiling:
    if variant is None:
        ceiling = headline_ceiling(report)
    else:
        ceiling = next((c for c in report.ceilings if c.variant == variant), None)
        if ceiling is None:
            known = ", ".join(c.variant for c in report.ceilings) or "none"
            raise SizingInputError(
                f"sizing.variant: the report has no variant {variant!r} (it has: {known})"
            )
    if ceiling is None or ceiling.level is None:
        why = " (inconclusive: the host was busy)" if ceiling and ceiling.inconclusive else ""
        raise SizingInputError(
            f"the report holds no ceiling{why}: no level passed; give --per-pod N instead"
        )
    return ceiling


def _passing(report: RunRecord, variant: str) -> list[StepResult]:
    return [
        s
        for s in report.steps
        if s.variant == variant and s.judgement.verdict is Verdict.PASS and s.target is not None
    ]


def _in_flight(step: StepResult) -> float | None:
    """Mean calls in flight over the trial, by Little's law: completions/s × mean latency."""
    client = step.client
    if client is None or client.measured_seconds <= 0:
        return None
    total = 0.0
    for operation in client.operations.values():
        histogram = decode(operation.latency)
        completed = histogram.get_total_count()
        if completed:
            mean_seconds = histogram.get_mean_value() / 1e6
            total += completed / client.measured_seconds * mean_seconds
    return total or None


def _memory_per_in_flight(steps: Sequence[StepResult]) -> tuple[float, int] | None:
    points = [
        (calls, float(s.target.memory_max_bytes))
        for s in steps
        if s.target is not None
        and s.target.memory_max_bytes is not None
        and (calls := _in_flight(s)) is not None
    ]
    slope = least_squares_slope(points)
    return None if slope is None or slope <= 0 else (slope, len(points))


def _extra_mean(steps: Sequence[StepResult], name: str) -> tuple[float, int] | None:
    values = [s.target.extra[name] for s in steps if s.target and name in s.target.extra]
    return (sum(values) / len(values), len(values)) if values else None


def measured(
    report: RunRecord, costs: Sequence[UnitCost], variant: str | None
) -> dict[str, tuple[float, str]]:
    """Every cost the report measured for the planned variant (`costs`: its per-unit
    costs, `decide.unit_costs`), with its basis in words."""
    ceiling = _ceiling(report, variant)
    name = ceiling.variant
    basis = f"report: ceiling of {name}, {ceiling.unit}"
    if not ceiling.complete:  # the run stopped early: the ceiling is only a lower bound
        basis += " (a lower bound: the run stopped before a level failed)"
    found: dict[str, tuple[float, str]] = {"per_pod": (float(ceiling.level or 0), basis)}
    probe = next((m for m in report.stream_memory if m.variant == name), None)
    if probe is not None and probe.bytes_per_stream > 0:
        found["memory_per_stream"] = (
            probe.bytes_per_stream,
            f"report: streams probe, {len(probe.counts)} counts",
        )
    steps = _passing(report, name)
    per_call = _memory_per_in_flight(steps)
    if per_call is not None:
        found["memory_per_in_flight"] = (
            per_call[0],
            f"report: memory over calls in flight, {per_call[1]} passing steps",
        )
    per_user = next(
        (c for c in costs if c.variant == name and c.name == "memory per user" and c.value > 0),
        None,
    )
    if per_user is not None:
        found["memory_per_user"] = (per_user.value, f"report: per-unit costs, {per_user.basis}")
    store = report.spec.sizing.store if report.spec.sizing else None
    if store is not None:
        for cost, metric in (
            ("calls_per_request", store.calls_metric),
            ("cpu_per_call", store.cpu_per_call_metric),
            ("bytes_per_key", store.bytes_per_key_metric),
        ):
            mean = _extra_mean(steps, metric) if metric else None
            if mean is not None:
                found[cost] = (mean[0], f"report: metrics.extra {metric}, {mean[1]} passing steps")
    resources = report.spec.target.resources
    if resources is not None:
        found["pod_memory"] = (float(resources.memory), "report: spec.target.resources")
    return found


def resolve(
    spec: SizingSpec,
    report: RunRecord | None,
    flags: Mapping[str, float],
    unit: str = "rps",
    *,
    costs: Sequence[UnitCost],
) -> SizingInput:
    """`spec` with every cost filled from `flags`, then `report` (with its per-unit
    `costs`), then `spec` itself.

    `flags` holds only what the user gave on the command line, by the cost's name
    (per_pod, memory_per_stream, memory_per_in_flight, memory_per_user, pod_memory,
    calls_per_request, cpu_per_call, bytes_per_key)."""
    found = measured(report, costs, spec.variant) if report is not None else {}
    headline = headline_ceiling(report) if report is not None else None
    if headline is not None:
        unit = headline.unit
    fields: dict[str, Any] = spec.model_dump()
    store: dict[str, Any] | None = fields.pop("store")
    if store is None and any(c in flags for c in STORE_COSTS):
        store = StoreSizing().model_dump()
    sources: dict[str, str] = {}

    def pick(cost: str, fallback: Any, target: dict[str, Any]) -> None:
        if cost in flags:
            target[cost], sources[cost] = flags[cost], "flag"
        elif cost in found:
            target[cost], sources[cost] = found[cost]
        elif fallback is not None:
            target[cost], sources[cost] = fallback, "spec.sizing"

    for cost in ("per_pod", *POD_COSTS):
        pick(cost, fields.get(cost), fields)
    if store is not None:
        for cost in STORE_COSTS:
            pick(cost, store.get(cost), store)
    if fields.get("per_pod") is None:
        raise SizingInputError("no per-pod ceiling: give --report FILE or --per-pod N")
    for cost in (*POD_COSTS, "bytes_per_key"):
        # Bytes fields parse whole numbers; a measured slope is fractional.
        holder = store if cost == "bytes_per_key" and store is not None else fields
        if isinstance(holder.get(cost), float):
            holder[cost] = round(holder[cost])
    return SizingInput.model_validate({**fields, "store": store, "unit": unit, "sources": sources})
