"""The Deployment's capacity contract (issue 58, item 5): what a run proves, what a new
image undoes, and the annotations that carry it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from plimsoll.api.confirmation import Confirmation, Finding
from plimsoll.api.contract import (
    CONTRACT_ANNOTATION,
    STATE_ANNOTATION,
    CapacityContract,
    ContractState,
)
from plimsoll.api.status import Ceiling
from plimsoll.api.step import LimitedBy
from plimsoll.api.target import PodShape
from plimsoll.decide.contract import (
    after_image_read,
    contract_annotations,
    proven,
    read_annotation,
)

SHAPE = PodShape.model_validate({"cpu": "500m", "memory": "256Mi"})
AT = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


def found(**changes: object) -> Ceiling:
    ceiling = Ceiling(
        level=300,
        unit="users",
        low=300,
        high=350,
        limited_by=LimitedBy.MEMORY,
        complete=True,
        confirmation=Confirmation(
            finding=Finding.CONFIRMED, named=LimitedBy.MEMORY, found=LimitedBy.MEMORY
        ),
    )
    return ceiling.model_copy(update=changes)


def prove(ceiling: Ceiling | None, image: str | None = "shop:1.0") -> CapacityContract | None:
    return proven(ceiling, SHAPE, image, run_id="r1", capacity_test="team/shop", at=AT)


def test_a_ceiling_found_is_proven_for_the_image_the_run_copied() -> None:
    contract = prove(found())
    assert contract is not None
    assert contract.state is ContractState.PROVEN
    assert contract.image == "shop:1.0"
    proof = contract.proven
    assert proof is not None
    assert (proof.ceiling, proof.unit, proof.cpu, proof.memory) == (300, "users", "500m", "256Mi")
    assert proof.limited_by is LimitedBy.MEMORY
    assert proof.finding is Finding.CONFIRMED
    assert (proof.run_id, proof.capacity_test, proof.at) == ("r1", "team/shop", AT)


@pytest.mark.parametrize(
    "ceiling",
    [
        None,
        found(level=None),
        found(complete=False, high=None, stop_reason="trial cap"),
        found(complete=False, high=None, every_level_passed=True),
        found(inconclusive=True),
    ],
    ids=["no ceiling", "nothing passed", "a range only", "at least", "busy host"],
)
def test_a_run_that_found_no_ceiling_proves_nothing(ceiling: Ceiling | None) -> None:
    assert prove(ceiling) is None


def test_without_the_image_copied_nothing_is_proven() -> None:
    assert prove(found(), image=None) is None


def test_a_new_image_makes_the_contract_unproven_and_keeps_the_last_proof() -> None:
    before = prove(found())
    after = after_image_read(before, "shop:1.1")
    assert after is not None
    assert after.state is ContractState.UNPROVEN
    assert after.image == "shop:1.1"
    assert before is not None
    assert after.proven == before.proven


def test_the_same_image_writes_nothing() -> None:
    before = prove(found())
    assert after_image_read(before, "shop:1.0") is None
    unproven = after_image_read(before, "shop:1.1")
    assert after_image_read(unproven, "shop:1.1") is None


def test_a_deployment_never_proven_is_marked_unproven() -> None:
    first = after_image_read(None, "shop:1.0")
    assert first == CapacityContract(state=ContractState.UNPROVEN, image="shop:1.0")


def test_rolling_back_to_the_proven_image_is_proven_again() -> None:
    unproven = after_image_read(prove(found()), "shop:1.1")
    back = after_image_read(unproven, "shop:1.0")
    assert back is not None
    assert back.state is ContractState.PROVEN


def test_the_annotations_carry_the_state_and_read_back() -> None:
    contract = prove(found())
    assert contract is not None
    written = contract_annotations(contract)
    assert written[STATE_ANNOTATION] == "proven"
    body = json.loads(written[CONTRACT_ANNOTATION])
    assert body["proven"]["limitedBy"] == "memory"
    assert body["proven"]["capacityTest"] == "team/shop"
    assert read_annotation(written[CONTRACT_ANNOTATION]) == contract


@pytest.mark.parametrize("value", [None, "", "not json", '{"state": "maybe"}', "[1]"])
def test_an_annotation_not_ours_reads_as_none(value: str | None) -> None:
    assert read_annotation(value) is None
