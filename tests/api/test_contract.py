"""`spec.contract.annotate` writes onto the Deployment the target copies, and says so
when there is none, or when the spec proves no one shape of it (issue 58, item 5)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plimsoll.api.resource import SpecError, load_capacity_test
from tests.api.test_spec_errors import MINIMAL

SHAPE = {"cpu": "1", "memory": "512Mi"}
BIGGER = {"cpu": "2", "memory": "1Gi"}
COPIED = {"fromDeployment": {"name": "api"}, "resources": SHAPE}


def _spec(target: dict[str, Any], **more: Any) -> dict[str, Any]:
    document = copy.deepcopy(MINIMAL)
    document["spec"]["target"] = target
    document["spec"]["contract"] = {"annotate": True}
    document["spec"].update(more)
    return document


def test_a_contract_on_the_copied_deployment_is_accepted() -> None:
    test = load_capacity_test(_spec(COPIED))
    assert test.spec.contract is not None
    assert test.spec.contract.annotate


def test_off_by_default() -> None:
    assert load_capacity_test(copy.deepcopy(MINIMAL)).spec.contract is None


@pytest.mark.parametrize(
    ("target", "more", "words"),
    [
        (
            {"image": "shop/api:1", "resources": SHAPE},
            {},
            "contract.annotate: the contract is written on the Deployment the target copies; "
            "set target.fromDeployment: {name: <deployment>}",
        ),
        (
            COPIED,
            {
                "variants": [
                    {"name": "a"},
                    {"name": "b", "resources": {"cpu": "2", "memory": "1Gi"}},
                ]
            },
            "contract.annotate: a spec comparing variants or shapes proves no one shape",
        ),
        (
            COPIED,
            {"shapes": {"explicit": [SHAPE, BIGGER]}},
            "contract.annotate: a spec comparing variants or shapes proves no one shape",
        ),
    ],
    ids=["no deployment", "variants", "shapes"],
)
def test_nothing_to_annotate_is_refused_naming_the_fix(
    target: dict[str, Any], more: dict[str, Any], words: str
) -> None:
    with pytest.raises(SpecError) as refused:
        load_capacity_test(_spec(target, **more))
    assert any(words in problem for problem in refused.value.problems), refused.value.problems
