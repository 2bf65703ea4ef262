"""The phase table and the condition helper: the status's rules of motion."""

from datetime import UTC, datetime, timedelta

import pytest

from plimsoll.api.status import (
    ConditionStatus,
    ConditionType,
    IllegalTransitionError,
    Phase,
    Reason,
    carried_into_a_new_run,
    check_transition,
    set_condition,
)

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_the_happy_path_is_allowed() -> None:
    phase = None
    for new in (Phase.PENDING, Phase.PROVISIONING, Phase.RUNNING, Phase.SUCCEEDED):
        phase = check_transition(phase, new)
    assert phase is Phase.SUCCEEDED


@pytest.mark.parametrize(
    ("current", "new"),
    [
        (Phase.SUCCEEDED, Phase.RUNNING),
        (Phase.PENDING, Phase.SUCCEEDED),
        (Phase.FAILED, Phase.RUNNING),
    ],
)
def test_moves_outside_the_table_are_refused(current: Phase, new: Phase) -> None:
    with pytest.raises(IllegalTransitionError, match=f"{current.value} cannot move to {new.value}"):
        check_transition(current, new)


def test_a_condition_keeps_its_transition_time_while_its_status_holds() -> None:
    first = set_condition(
        [], ConditionType.READY, ConditionStatus.FALSE, Reason.TRIAL_RUNNING, "step 1", T0, 1
    )
    later = T0 + timedelta(minutes=5)
    same = set_condition(
        first, ConditionType.READY, ConditionStatus.FALSE, Reason.TRIAL_RUNNING, "step 2", later, 1
    )
    assert same[0].last_transition_time == T0
    assert same[0].message == "step 2"
    flipped = set_condition(
        same, ConditionType.READY, ConditionStatus.TRUE, Reason.CEILING_FOUND, "done", later, 1
    )
    assert flipped[0].last_transition_time == later
    assert len(flipped) == 1


def test_conditions_of_other_types_are_left_alone() -> None:
    conditions = set_condition(
        [], ConditionType.SPEC_VALID, ConditionStatus.TRUE, Reason.VALID, "", T0
    )
    conditions = set_condition(
        conditions, ConditionType.READY, ConditionStatus.FALSE, Reason.QUEUED, "", T0
    )
    assert [c.type for c in conditions] == [ConditionType.SPEC_VALID, ConditionType.READY]


def test_a_new_run_starts_without_the_last_runs_proof() -> None:
    conditions = set_condition(
        [], ConditionType.READY, ConditionStatus.TRUE, Reason.CEILING_FOUND, "", T0
    )
    conditions = set_condition(
        conditions, ConditionType.PROVED, ConditionStatus.TRUE, Reason.HELD, "it held.", T0
    )
    carried = carried_into_a_new_run(conditions)
    assert [c.type for c in carried] == [ConditionType.READY]
