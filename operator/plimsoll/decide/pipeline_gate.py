"""What a run tells a pipeline: one case per variant and per proof, and the run's answer.

A CI job needs to tell "the service got worse" from "the run broke". Both ends of
Plimsoll that a pipeline waits on decide it here, the same way: `plimsoll run` from its
run record and its proof (its exit code and `--junit`), `kubectl plimsoll wait` from the
CapacityTest's status. Each variant's ceiling is a case (held against `--fail-below`
and the regression gate), and so is a proof; the answer is

1. INCOMPLETE when the run did not complete, or a case could not be judged (a range
   only, a gate that could not compare, "at least N" below the bar): nothing was
   answered, so nothing was refused;
2. else REFUSED when any case says no (a ceiling below the bar, a regression, a proof
   that did not hold): answered, and the answer is no;
3. else WITHIN: answered, and within every bar.

Pure: the callers read the report or the status and print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from plimsoll.api.proof import Proof
from plimsoll.api.run_record import Outcome, RunRecord
from plimsoll.api.status import (
    TERMINAL_PHASES,
    CapacityTestStatus,
    Ceiling,
    Phase,
    VariantState,
)
from plimsoll.decide.operator_action import Desired


class Answer(StrEnum):
    WITHIN = "within"  # answered, and every case passed
    REFUSED = "refused"  # answered, but the bar, the regression gate or the proof says no
    INCOMPLETE = "incomplete"  # the run could not complete, or a case could not be judged


@dataclass(frozen=True)
class Case:
    """One thing a pipeline checks: `passed` None when it could not be judged."""

    name: str
    passed: bool | None
    message: str


def ceiling_case(
    variant: str,
    level: int | None,
    unit: str,
    *,
    complete: bool,
    regressions: Sequence[str] = (),
    fail_below: int | None = None,
    why_incomplete: str = "",
    at_least: bool = False,
) -> Case:
    """A variant's ceiling against `fail_below` and the regression gate's lines for it.

    `at_least`: every level passed, so `level` is a lower bound, not a ceiling. It meets
    a bar at or under it; a bar over it is neither met nor missed (no level that high
    was tried)."""
    name = f"ceiling {variant}"
    found = "no level passed" if level is None else f"ceiling {level:,} {unit}"
    if at_least and level is not None:
        found = f"at least {level:,} {unit} (every level passed)"
        if fail_below is not None and level < fail_below:
            return Case(
                name, None, f"{found}: no level as high as the bar of {fail_below:,} was tried"
            )
    if not complete:
        why = f": {why_incomplete}" if why_incomplete else ""
        return Case(name, None, f"{found}, but the search stopped early{why}")
    problems = list(regressions)
    if fail_below is not None and (level is None or level < fail_below):
        problems.insert(0, f"{found}, below the bar of {fail_below:,} {unit} (--fail-below)")
    elif level is None:
        problems.insert(0, f"{found}: even the lowest level failed the bar")
    if problems:
        return Case(name, False, "; ".join(problems))
    bar = f", at least {fail_below:,} {unit}" if fail_below is not None else ""
    return Case(name, True, f"{found}{bar}")


def proof_case(proof: Proof) -> Case:
    return Case("proof", proof.held, proof.sentence)


def answer(completed: bool, cases: Sequence[Case]) -> Answer:
    """The run's answer from whether it completed and its cases (the rules above)."""
    if not completed or not cases:
        return Answer.INCOMPLETE
    if any(case.passed is False for case in cases):
        return Answer.REFUSED
    if any(case.passed is None for case in cases):
        return Answer.INCOMPLETE
    return Answer.WITHIN


def _of_ceiling(
    ceiling: Ceiling, regressions: Sequence[str], fail_below: int | None, why: str
) -> Case:
    return ceiling_case(
        ceiling.variant,
        ceiling.level,
        ceiling.unit,
        complete=(ceiling.complete or ceiling.every_level_passed) and not ceiling.inconclusive,
        regressions=regressions,
        fail_below=fail_below,
        why_incomplete=ceiling.stop_reason or why,
        at_least=ceiling.every_level_passed,
    )


def report_cases(
    report: RunRecord,
    regressions: Mapping[str, Sequence[str]] | None = None,
    fail_below: int | None = None,
    *,
    proof: Proof | None = None,
) -> list[Case]:
    """The cases of a finished (or stopped) local run, or its `proof` when it proved one
    (the report's, `report.assemble`); `regressions` maps a variant to the regression
    gate's lines about it."""
    gate = regressions or {}
    why = report.message if report.outcome is not Outcome.SUCCEEDED else ""
    flights = {s.variant: s.flight for s in report.steps if s.flight is not None}
    if proof is not None:  # a proof run has no ceiling to judge: its proof is the case
        cases = [proof_case(proof)]
    elif flights:  # nor a flight: what it lived through is the case, one per variant
        cases = [Case(f"flight {v}", f.held, f.sentence) for v, f in flights.items()]
    else:
        cases = [_of_ceiling(c, gate.get(c.variant, ()), fail_below, why) for c in report.ceilings]
    if report.outcome is not Outcome.SUCCEEDED and not cases:
        cases.append(Case("run", None, report.message or "the run could not complete"))
    return cases


def report_answer(report: RunRecord, cases: Sequence[Case]) -> Answer:
    return answer(report.outcome is Outcome.SUCCEEDED, cases)


def status_cases(status: CapacityTestStatus, fail_below: int | None = None) -> list[Case]:
    """The cases of a finished run on a cluster, from its CapacityTest's status."""
    if status.proof is not None:
        return [proof_case(status.proof)]
    regressed = {r.variant: [r.message or "regressed"] for r in status.regression if r.regressed}
    if status.variants:  # several variants: each one's row (status.ceiling is the baseline's)
        cases = [
            ceiling_case(
                v.name,
                v.ceiling,
                v.unit,
                complete=v.state is VariantState.SUCCEEDED,
                regressions=regressed.get(v.name, ()),
                fail_below=fail_below,
            )
            for v in status.variants
        ]
    else:
        ceilings = [status.ceiling] if status.ceiling is not None else []
        cases = [_of_ceiling(c, regressed.get(c.variant, ()), fail_below, "") for c in ceilings]
    if status.phase is Phase.FAILED and not cases:
        cases.append(Case("run", None, status.message or "the run failed"))
    return cases


def status_answer(status: CapacityTestStatus, cases: Sequence[Case]) -> Answer:
    return answer(status.phase is Phase.SUCCEEDED, cases)


def run_ended(meta: Mapping[str, Any], status: CapacityTestStatus) -> bool:
    """Has the run the resource now asks for (its generation, its rerun token) ended? A
    Succeeded status left from before an edit or a `rerun` is not the answer to wait for."""
    desired = Desired.of(dict(meta))
    return (
        status.phase in TERMINAL_PHASES
        and status.observed_generation == desired.generation
        and status.rerun_token == desired.rerun_token
    )
