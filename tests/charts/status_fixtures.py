"""CapacityTest objects as Argo CD sees them, one or more per phase.

Built from the real status models (plimsoll.api.status) and serialised with
`.to_wire()`, exactly what the operator writes, so the Lua health check is
tested against the field names and values the API really produces.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from plimsoll.api.autoscale import AutoscalingStatus, FlightResult
from plimsoll.api.comparison import Difference
from plimsoll.api.resource import API_VERSION, KIND
from plimsoll.api.status import (
    CapacityTestStatus,
    Ceiling,
    Condition,
    ConditionStatus,
    ConditionType,
    CurrentStep,
    Phase,
    Reason,
    VariantState,
    VariantStatus,
    set_condition,
)
from plimsoll.api.step import LimitedBy

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Fixture:
    name: str
    phase: Phase | None
    obj: dict[str, Any]
    health: str
    message: str
    gated: bool = False  # judged by a condition (Regressed, Proved): not the phase alone


def _conditions(*items: tuple[ConditionType, ConditionStatus, Reason, str]) -> list[Condition]:
    conditions: list[Condition] = []
    for type_, status, reason, message in items:
        conditions = set_condition(conditions, type_, status, reason, message, NOW, 1)
    return conditions


def _obj(status: CapacityTestStatus | None, generation: int = 1) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": "edge-max-rps", "namespace": "perf", "generation": generation},
    }
    if status is not None:
        obj["status"] = status.to_wire()
    return obj


VALID = (ConditionType.SPEC_VALID, ConditionStatus.TRUE, Reason.VALID, "")


def _proof_fixture(held: bool) -> Fixture:
    """A proof run (search.strategy: prove): Succeeded either way, Proved says if it held."""
    sentence = (
        "3 replicas across 3 zones held 600 requests/s; with zone a lost at 30 s, p99 rose to "
        "8.1 ms (bar 10 ms), back within it after 2.0 s, and 14 requests failed (0.02%); "
        + ("it held." if held else "it did not hold.")
    )
    ceiling = Ceiling(level=600 if held else None, unit="rps", complete=True)
    status = CapacityTestStatus(
        phase=Phase.SUCCEEDED,
        observed_generation=1,
        ceiling=ceiling,
        conditions=_conditions(
            VALID,
            (ConditionType.READY, ConditionStatus.TRUE, Reason.CEILING_FOUND, "ok"),
            (
                ConditionType.PROVED,
                ConditionStatus.TRUE if held else ConditionStatus.FALSE,
                Reason.HELD if held else Reason.NOT_HELD,
                sentence,
            ),
        ),
    )
    return Fixture(
        "succeeded-proved" if held else "succeeded-not-proved",
        Phase.SUCCEEDED,
        _obj(status),
        "Healthy" if held else "Degraded",
        ("Proved: " if held else "Not proved: ") + sentence,
        gated=True,
    )


def _flight_fixture(held: bool, recommended_held: bool | None) -> Fixture:
    """An autoscaler flight (search.strategy: autoscale): Succeeded either way,
    status.autoscaling says whether it held, and whether the recommended HPA did."""
    sentence = (
        "a burst from 40 to 160 requests/s in 10 s: 1 → 4 pods in 48 s; p99 over the bar "
        "for 31 s; 212 requests failed (0.4%); " + ("it held" if held else "it did not hold")
    )
    flight = FlightResult(
        profile="a burst", held=held, sentence=sentence, start_replicas=1, peak_replicas=4
    )
    proof = FlightResult(profile="a burst", held=bool(recommended_held))
    autoscaling = AutoscalingStatus.of(flight, proof if recommended_held is not None else None)
    status = CapacityTestStatus(
        phase=Phase.SUCCEEDED,
        observed_generation=1,
        conditions=_conditions(
            VALID, (ConditionType.READY, ConditionStatus.TRUE, Reason.CEILING_FOUND, "ok")
        ),
        autoscaling=autoscaling,
    )
    after = {True: "; the recommended HPA held", False: "; the recommended HPA did not hold either"}
    return Fixture(
        f"succeeded-flight-{'held' if held else 'not-held'}"
        + ("" if recommended_held is None else f"-recommended-{str(recommended_held).lower()}"),
        Phase.SUCCEEDED,
        _obj(status),
        "Healthy" if held else "Degraded",
        ("Flight held: " if held else "Flight did not hold: ")
        + sentence
        + (after[recommended_held] if recommended_held is not None else ""),
        gated=True,
    )


def fixtures() -> list[Fixture]:
    ceiling = Ceiling(
        level=120, unit="users", low=120, high=130, limited_by=LimitedBy.MEMORY, complete=True
    )
    return [
        Fixture(
            "pending-new",
            Phase.PENDING,
            _obj(CapacityTestStatus(phase=Phase.PENDING, observed_generation=1)),
            "Progressing",
            "Pending",
        ),
        Fixture(
            "queued",
            Phase.QUEUED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.QUEUED,
                    observed_generation=1,
                    conditions=_conditions(
                        VALID,
                        (
                            ConditionType.PROGRESSING,
                            ConditionStatus.TRUE,
                            Reason.QUEUED,
                            "waiting for a free slot: 2 of 2 runs active",
                        ),
                    ),
                )
            ),
            "Progressing",
            "Queued: waiting for a free slot: 2 of 2 runs active",
        ),
        Fixture(
            "provisioning",
            Phase.PROVISIONING,
            _obj(
                CapacityTestStatus(
                    phase=Phase.PROVISIONING,
                    observed_generation=1,
                    namespace="plimsoll-edge-max-rps-3f2a",
                    conditions=_conditions(
                        VALID,
                        (
                            ConditionType.PROGRESSING,
                            ConditionStatus.TRUE,
                            Reason.PROVISIONING,
                            "starting target, mock and 2 generators in plimsoll-edge-max-rps-3f2a",
                        ),
                    ),
                )
            ),
            "Progressing",
            "Provisioning: starting target, mock and 2 generators in plimsoll-edge-max-rps-3f2a",
        ),
        Fixture(
            "running",
            Phase.RUNNING,
            _obj(
                CapacityTestStatus(
                    phase=Phase.RUNNING,
                    observed_generation=1,
                    current_step=CurrentStep(index=4, level=160, started_at=NOW),
                    step_count=4,
                    conditions=_conditions(
                        VALID,
                        (
                            ConditionType.PROGRESSING,
                            ConditionStatus.TRUE,
                            Reason.TRIAL_RUNNING,
                            "step 5 at 160 users (last pass 120, first fail none yet)",
                        ),
                    ),
                )
            ),
            "Progressing",
            "Running: step 5 at 160 users (last pass 120, first fail none yet)",
        ),
        Fixture(
            "running-message-only",
            Phase.RUNNING,
            _obj(
                CapacityTestStatus(
                    phase=Phase.RUNNING, observed_generation=1, message="step 2 at 40 rps"
                )
            ),
            "Progressing",
            "Running: step 2 at 40 rps",
        ),
        Fixture(
            "succeeded",
            Phase.SUCCEEDED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.SUCCEEDED,
                    observed_generation=1,
                    ceiling=ceiling,
                    conditions=_conditions(
                        VALID,
                        (
                            ConditionType.READY,
                            ConditionStatus.TRUE,
                            Reason.CEILING_FOUND,
                            "ceiling found after 9 steps",
                        ),
                    ),
                )
            ),
            "Healthy",
            "Succeeded: ceiling 120 users, limited by memory",
        ),
        Fixture(
            "succeeded-range-only",
            Phase.SUCCEEDED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.SUCCEEDED,
                    observed_generation=1,
                    ceiling=Ceiling(
                        level=800,
                        unit="rps",
                        low=800,
                        high=1600,
                        complete=False,
                        stop_reason="maxSteps reached",
                    ),
                    conditions=_conditions(
                        (ConditionType.READY, ConditionStatus.TRUE, Reason.RANGE_ONLY, "")
                    ),
                )
            ),
            "Healthy",
            "Succeeded: ceiling 800 rps (range only between 800 and 1600)",
        ),
        Fixture(
            "succeeded-variants",
            Phase.SUCCEEDED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.SUCCEEDED,
                    observed_generation=1,
                    ceiling=ceiling.model_copy(update={"variant": "embedded"}),
                    variants=[
                        VariantStatus(
                            name="embedded",
                            state=VariantState.SUCCEEDED,
                            ceiling=120,
                            unit="users",
                            last_pass=120,
                            first_fail=130,
                            limited_by=LimitedBy.MEMORY,
                            delta_percent=0.0,
                            verdict=Difference.BASELINE,
                        ),
                        VariantStatus(
                            name="postgres",
                            state=VariantState.SUCCEEDED,
                            ceiling=90,
                            unit="users",
                            last_pass=90,
                            first_fail=100,
                            limited_by=LimitedBy.CPU,
                            delta_percent=-25.0,
                            verdict=Difference.LOWER,
                        ),
                        VariantStatus(
                            name="sharded",
                            state=VariantState.SUCCEEDED,
                            ceiling=110,
                            unit="users",
                            last_pass=110,
                            first_fail=140,
                            delta_percent=-8.3,
                            verdict=Difference.WITHIN_NOISE,
                        ),
                    ],
                    variant_count=3,
                )
            ),
            "Healthy",
            "Succeeded: embedded: ceiling 120 users, limited by memory (baseline); "
            "postgres: ceiling 90 users, limited by cpu, -25.0% (lower); "
            "sharded: ceiling 110 users, -8.3% (within noise)",
        ),
        Fixture(
            "failed-invalid-spec",
            Phase.FAILED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.FAILED,
                    observed_generation=1,
                    message="the spec is invalid",
                    conditions=_conditions(
                        (
                            ConditionType.SPEC_VALID,
                            ConditionStatus.FALSE,
                            Reason.INVALID_SPEC,
                            "spec.search.precision: must be below spec.search.max",
                        ),
                        (
                            ConditionType.READY,
                            ConditionStatus.FALSE,
                            Reason.INVALID_SPEC,
                            "the spec is invalid",
                        ),
                    ),
                )
            ),
            "Degraded",
            "spec.search.precision: must be below spec.search.max",
        ),
        Fixture(
            "failed-run",
            Phase.FAILED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.FAILED,
                    observed_generation=1,
                    conditions=_conditions(
                        VALID,
                        (
                            ConditionType.READY,
                            ConditionStatus.FALSE,
                            Reason.MEASUREMENT_INVALID,
                            "step 3 invalid: generator gen-1 used 97% CPU (max 85%)",
                        ),
                    ),
                )
            ),
            "Degraded",
            "step 3 invalid: generator gen-1 used 97% CPU (max 85%)",
        ),
        Fixture(
            "failed-message-only",
            Phase.FAILED,
            _obj(CapacityTestStatus(phase=Phase.FAILED, message="namespace quota exceeded")),
            "Degraded",
            "namespace quota exceeded",
        ),
        Fixture(
            "succeeded-regressed",
            Phase.SUCCEEDED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.SUCCEEDED,
                    observed_generation=1,
                    ceiling=ceiling,
                    change="-25% REGRESSED",
                    conditions=_conditions(
                        VALID,
                        (ConditionType.READY, ConditionStatus.TRUE, Reason.CEILING_FOUND, "ok"),
                        (
                            ConditionType.REGRESSED,
                            ConditionStatus.TRUE,
                            Reason.REGRESSED,
                            "default: 120 users vs 160 users (previous run 1a2b3c4d), -25%: "
                            "regressed",
                        ),
                    ),
                )
            ),
            "Degraded",
            "Regressed: default: 120 users vs 160 users (previous run 1a2b3c4d), -25%: regressed",
            gated=True,
        ),
        _proof_fixture(held=True),
        _proof_fixture(held=False),
        _flight_fixture(held=True, recommended_held=None),
        _flight_fixture(held=False, recommended_held=True),
        Fixture(
            "succeeded-within-noise",
            Phase.SUCCEEDED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.SUCCEEDED,
                    observed_generation=1,
                    ceiling=ceiling,
                    change="-4%",
                    conditions=_conditions(
                        VALID,
                        (ConditionType.READY, ConditionStatus.TRUE, Reason.CEILING_FOUND, "ok"),
                        (
                            ConditionType.REGRESSED,
                            ConditionStatus.FALSE,
                            Reason.NO_REGRESSION,
                            "default: 120 users vs 125 users, -4%: no regression",
                        ),
                    ),
                )
            ),
            "Healthy",
            "Succeeded: ceiling 120 users, limited by memory (-4% vs baseline)",
            gated=True,
        ),
        Fixture(
            "succeeded-first-gated-run",
            Phase.SUCCEEDED,
            _obj(
                CapacityTestStatus(
                    phase=Phase.SUCCEEDED,
                    observed_generation=1,
                    ceiling=ceiling,
                    conditions=_conditions(
                        VALID,
                        (ConditionType.READY, ConditionStatus.TRUE, Reason.CEILING_FOUND, "ok"),
                        (
                            ConditionType.REGRESSED,
                            ConditionStatus.FALSE,
                            Reason.NO_BASELINE,
                            "default: no earlier complete run to compare with yet",
                        ),
                    ),
                )
            ),
            "Healthy",
            "Succeeded: ceiling 120 users, limited by memory",
            gated=True,
        ),
        Fixture(
            "no-status-yet",
            None,
            _obj(None),
            "Progressing",
            "Waiting for the Plimsoll operator to pick up the test",
        ),
        Fixture(
            "spec-changed-not-yet-observed",
            None,
            _obj(
                CapacityTestStatus(phase=Phase.SUCCEEDED, observed_generation=1, ceiling=ceiling),
                generation=2,
            ),
            "Progressing",
            "Waiting for the operator to observe generation 2",
        ),
    ]
