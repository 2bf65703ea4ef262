"""`spec.trigger.onImageChange` watches the Deployment the target copies, and says so
when it does not (issue 58)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plimsoll.api.resource import SpecError, load_capacity_test
from tests.api.test_spec_errors import MINIMAL


def _spec(target: dict[str, Any], deployment: str) -> dict[str, Any]:
    document = copy.deepcopy(MINIMAL)
    document["spec"]["target"] = target
    document["spec"]["trigger"] = {"onImageChange": {"deployment": deployment}}
    return document


SHAPE = {"cpu": "1", "memory": "512Mi"}


def test_the_watched_deployment_is_the_one_the_target_copies() -> None:
    test = load_capacity_test(_spec({"fromDeployment": {"name": "api"}, "resources": SHAPE}, "api"))
    assert test.spec.trigger is not None
    assert test.spec.trigger.on_image_change is not None
    assert test.spec.trigger.on_image_change.deployment == "api"


@pytest.mark.parametrize(
    ("target", "words"),
    [
        (
            {"fromDeployment": {"name": "web"}, "resources": SHAPE},
            "trigger.onImageChange.deployment: 'api' is not the Deployment the target copies "
            "('web'): name the same one",
        ),
        (
            {"image": "shop/api:1", "resources": SHAPE},
            "trigger.onImageChange: the run measures target.fromDeployment's image; set "
            "target.fromDeployment: {name: api}",
        ),
    ],
)
def test_another_deployment_or_none_is_refused_naming_the_fix(
    target: dict[str, Any], words: str
) -> None:
    with pytest.raises(SpecError) as refused:
        load_capacity_test(_spec(target, "api"))
    assert any(words in problem for problem in refused.value.problems), refused.value.problems
