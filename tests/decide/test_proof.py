"""The proof's figures and sentence, from steps of known shape."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from plimsoll.api.faults import FaultOutcome
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import Judgement, StepResult, Verdict
from plimsoll.api.timeline import TimelineSlice
from plimsoll.api.trial import TrialResult
from plimsoll.decide.fault_windows import judge_fault
from plimsoll.decide.proof import prove
from tests.timelinefixtures import known_timeline

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def _spec(**search: Any) -> CapacityTestSpec:
    return CapacityTestSpec.model_validate(
        {
            "target": {
                "command": ["t"],
                "resources": {"cpu": "0.25", "memory": "128Mi"},
                "replicas": 3,
                "zones": ["a", "b", "c"],
            },
            "workload": {"model": "rate", "mix": [{"name": "w", "path": "/"}]},
            "trial": {"duration": "8s", "faults": [{"at": "3.5s", "remove": {"zone": "a"}}]},
            "search": {"strategy": "prove", "level": 600, **search},
            "passWhen": {"latency": [{"quantile": "p99", "below": "10ms"}]},
        }
    )


def _with_replicas(slices: list[TimelineSlice], lost_at: int) -> list[TimelineSlice]:
    """Each slice's sends spread over three replicas, then over the two left."""
    out = []
    for slice_ in slices:
        if slice_.start < lost_at:
            share = [slice_.sent // 3] * 3
        else:
            share = [0, slice_.sent // 2, slice_.sent // 2]
        out.append(slice_.model_copy(update={"replica_sent": share}))
    return out


def _step(
    slices: list[TimelineSlice], outcome: FaultOutcome | None, verdict: Verdict
) -> StepResult:
    client = TrialResult.model_validate(
        {"id": "t", "state": "done", "level": 600, "measuredSeconds": 8.0}
    )
    client.timeline = slices
    return StepResult(
        index=1,
        level=600,
        started_at=NOW,
        ended_at=NOW,
        duration=8.0,
        client=client,
        judgement=Judgement(verdict=verdict, reasons=[] if verdict is Verdict.PASS else ["x"]),
        faults=[outcome] if outcome is not None else [],
    )


def test_a_held_proof_reads_like_the_issue() -> None:
    spec = _spec()
    slices = _with_replicas(
        known_timeline([2, 2, 2, 8.1, 3, 2, 2, 2], [0, 0, 0, 14, 0, 0, 0, 0]), 4
    )
    outcome = judge_fault(slices, 3.5, spec.pass_when, "zone a lost at 3.5 s", ["target"])
    proof = prove(spec, _step(slices, outcome, Verdict.PASS))
    assert proof.held
    assert proof.failed_requests == 14
    assert proof.p99_ms is not None
    assert 8 <= proof.p99_ms <= 8.2
    assert [(r.replica, r.zone) for r in proof.remaining] == [("target-1", "b"), ("target-2", "c")]
    # From the fault on: 4.5 s; the 3.5 s slice still spread over three.
    assert all(r.rate > 0 for r in proof.remaining)
    assert proof.sentence.startswith(
        "3 replicas across 3 zones held 600 requests/s; with zone a lost at 3.5 s, p99 rose "
        "to 8.1 ms (bar 10 ms), back within it after 0.5 s, and 14 requests failed (1.72%); "
        "the 2 left carried "
    )
    assert proof.sentence.endswith(" requests/s; it held.")


def test_an_overload_after_the_loss_does_not_hold() -> None:
    spec = _spec()
    slices = known_timeline([2, 2, 2, 15, 30, 60, 90, 120], [0, 0, 0, 2, 0, 0, 0, 0])
    outcome = judge_fault(slices, 3.5, spec.pass_when, "zone a lost at 3.5 s", ["target"])
    proof = prove(spec, _step(slices, outcome, Verdict.FAIL))
    assert not proof.held
    assert proof.recovery_s is None
    assert proof.remaining == []  # no per-replica counts in these slices
    assert "ran 600 requests/s" in proof.sentence
    assert "never came back" in proof.sentence
    assert proof.sentence.endswith("it did not hold.")


def test_a_p99_in_seconds_reads_in_whole_milliseconds_not_in_exponent_form() -> None:
    spec = _spec()
    slices = known_timeline([2, 2, 2, 300, 1200, 2400, 3127, 3100], [0, 0, 0, 2, 0, 0, 0, 0])
    outcome = judge_fault(slices, 3.5, spec.pass_when, "zone a lost at 3.5 s", ["target"])
    proof = prove(spec, _step(slices, outcome, Verdict.FAIL))
    # Seen in a real run: "p99 rose to 3.13e+03 ms".
    assert "p99 rose to 3,130 ms (bar 10 ms)" in proof.sentence, proof.sentence
    assert "e+" not in proof.sentence


def test_a_proof_without_a_fault_gives_the_whole_trials_p99() -> None:
    spec = _spec().model_copy(update={"trial": _spec().trial.model_copy(update={"faults": []})})
    slices = known_timeline([3] * 4, [0] * 4)
    proof = prove(spec, _step(slices, None, Verdict.PASS))
    assert proof.sentence == (
        "3 replicas across 3 zones held 600 requests/s for 8 s; p99 3 ms (bar 10 ms) and 0 "
        "requests failed (0.00%); it held."
    )


def test_a_proof_with_no_judged_step_is_not_proved_and_says_why() -> None:
    proof = prove(_spec(), None, why_not="the target exited")
    assert not proof.held
    assert proof.sentence == (
        "3 replicas across 3 zones at 600 requests/s: the trial could not be judged "
        "(the target exited); not proved."
    )
