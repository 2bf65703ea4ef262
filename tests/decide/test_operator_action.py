"""The operator's pure decisions: start, resume, idle, invalid; and the RBAC path parser."""

from __future__ import annotations

from plimsoll.api.status import CapacityTestStatus, ConditionType, Phase
from plimsoll.controller.rbac import allows, request_attributes
from plimsoll.decide.operator_action import (
    Action,
    Desired,
    choose_action,
    conditions_for,
    restart_reason,
)

G1 = Desired(generation=1, rerun_token=None)


def status(
    phase: Phase, generation: int | None = 1, token: str | None = None
) -> CapacityTestStatus:
    return CapacityTestStatus(
        phase=phase, observed_generation=generation, rerun_token=token, run_id="abc"
    )


def test_first_sight_starts() -> None:
    assert choose_action(None, G1, spec_valid=True) is Action.START


def test_a_run_under_way_of_this_generation_resumes() -> None:
    for phase in (Phase.PENDING, Phase.QUEUED, Phase.PROVISIONING, Phase.RUNNING):
        assert choose_action(status(phase), G1, spec_valid=True) is Action.RESUME


def test_a_finished_run_idles_until_a_new_generation_or_token() -> None:
    assert choose_action(status(Phase.SUCCEEDED), G1, spec_valid=True) is Action.IDLE
    assert choose_action(status(Phase.SUCCEEDED), Desired(2, None), spec_valid=True) is Action.START
    assert (
        choose_action(status(Phase.FAILED), Desired(1, "sync-7"), spec_valid=True) is Action.START
    )
    assert restart_reason(status(Phase.FAILED), Desired(1, "sync-7")).value == "RerunRequested"
    assert restart_reason(status(Phase.FAILED), Desired(2, None)).value == "SpecChanged"


def test_a_new_schedule_slot_starts_a_finished_run_with_its_reason() -> None:
    done = status(Phase.SUCCEEDED)
    due = Desired(1, None, scheduled_slot="2026-11-30T02:00:00Z")
    assert choose_action(done, due, spec_valid=True) is Action.START
    assert restart_reason(done, due).value == "Scheduled"
    served = done.model_copy(update={"scheduled_slot": "2026-11-30T02:00:00Z"})
    assert choose_action(served, due, spec_valid=True) is Action.IDLE
    # A new generation that also brings a slot is a spec change first.
    assert restart_reason(done, Desired(2, None, "2026-11-30T02:00:00Z")).value == "SpecChanged"


def test_a_new_image_of_the_watched_deployment_starts_a_finished_run() -> None:
    """spec.trigger.onImageChange (issue 58): the image served is part of what is asked."""
    done = status(Phase.SUCCEEDED).model_copy(update={"trigger_image": "shop/api:1.4"})
    same = Desired(1, None, trigger_image="shop/api:1.4")
    assert choose_action(done, same, spec_valid=True) is Action.IDLE
    new = Desired(1, None, trigger_image="shop/api:1.5")
    assert choose_action(done, new, spec_valid=True) is Action.START
    assert restart_reason(done, new).value == "ImageChanged"
    # Mid-run the newest image wins: the run under way stops and a new one starts.
    running = done.model_copy(update={"phase": Phase.RUNNING})
    assert choose_action(running, new, spec_valid=True) is Action.START
    # A new generation that also brings an image is a spec change first.
    assert restart_reason(done, Desired(2, None, trigger_image="shop/api:1.5")).value == (
        "SpecChanged"
    )


def test_an_invalid_spec_is_recorded_once() -> None:
    assert choose_action(None, G1, spec_valid=False) is Action.INVALID
    recorded = CapacityTestStatus(phase=Phase.FAILED, observed_generation=1)
    assert choose_action(recorded, G1, spec_valid=False) is Action.IDLE
    assert choose_action(recorded, Desired(2, None), spec_valid=False) is Action.INVALID


def test_phases_imply_conditions() -> None:
    done = {c.type: c for c in conditions_for(Phase.SUCCEEDED)}
    assert done[ConditionType.READY].status.value == "True"
    failed = {c.type: c for c in conditions_for(Phase.FAILED, range_only=True)}
    assert failed[ConditionType.READY].reason.value == "RangeOnly"


def test_rbac_parses_api_paths_and_allows_only_listed_calls() -> None:
    assert request_attributes("GET", "/apis/plimsoll.dev/v1alpha1") is None
    proxied = request_attributes("POST", "/api/v1/namespaces/ns/pods/generator-0:8089/proxy/trials")
    assert proxied == ("", "pods/proxy", "create")
    assert allows(*proxied)
    watch = request_attributes("GET", "/apis/plimsoll.dev/v1alpha1/capacitytests", "watch=true")
    assert watch == ("plimsoll.dev", "capacitytests", "watch")
    assert allows(*watch)
    assert allows("", "secrets", "patch")  # the run's own Secrets: server-side applied
    assert not allows("", "secrets", "update")  # never replaced whole
    assert not allows("", "secrets", "watch")
    assert not allows("rbac.authorization.k8s.io", "clusterroles", "create")
    assert not allows("plimsoll.dev", "capacitytests", "delete")
