"""A proof from the sizing plan: the plan's pods and zones, scaled to fit one machine."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.proof_plan import ProofPlanError, planned_proof


def _spec(sizing: dict[str, Any], **target: Any) -> CapacityTestSpec:
    return CapacityTestSpec.model_validate(
        {
            "target": {"command": ["t"], "resources": {"cpu": "1", "memory": "512Mi"}, **target},
            "workload": {"model": "rate", "mix": [{"name": "w", "path": "/"}]},
            "trial": {"duration": "120s", "faults": [{"at": "30s", "remove": {"zone": "a"}}]},
            "search": {"strategy": "prove", "fromSizing": True, "scale": "25%"},
            "sizing": sizing,
        }
    )


def test_the_plans_pods_and_zones_run_at_a_share_of_the_peak_and_cpu() -> None:
    # 2,400 requests/s over 3 zones with a 1,600 requests/s pod at 60%: 3 pods, one a zone,
    # and two left after a zone loss carry 1,200 each (75% of their ceiling).
    spec = _spec({"peak": 2400, "zones": 3, "utilisation": "75%", "perPod": 1600})
    proved = planned_proof(spec)
    assert proved.target.replicas == 3
    assert proved.target.zones == ["a", "b", "c"]
    assert proved.target.resources is not None
    assert proved.target.resources.cpu == 0.25
    assert proved.target.resources.memory == spec.target.resources.memory  # type: ignore[union-attr]
    assert proved.search.level == 600


def test_a_spec_without_a_proof_from_sizing_is_left_alone() -> None:
    spec = _spec({"peak": 2400, "zones": 3, "perPod": 1600})
    plain = spec.model_copy(
        update={"search": spec.search.model_copy(update={"from_sizing": False, "level": 5})}
    )
    assert planned_proof(plain) is plain


def test_a_plan_past_the_replica_bound_says_how_to_shrink_it() -> None:
    spec = _spec({"peak": 100_000, "zones": 3, "perPod": 100})
    with pytest.raises(ProofPlanError, match=r"spec\.sizing\.peak"):
        planned_proof(spec)


@pytest.mark.parametrize(
    ("sizing", "target", "message"),
    [
        ({"peak": 2400, "zones": 3}, {}, r"spec\.sizing\.perPod"),
        ({"peak": 2400, "zones": 3, "perPod": 1600}, {"replicas": 3}, r"leave target\.replicas"),
    ],
)
def test_what_a_proof_from_sizing_needs_is_named(
    sizing: dict[str, Any], target: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        _spec(sizing, **target)


def test_a_fault_must_name_a_planned_zone() -> None:
    with pytest.raises(ValidationError, match=r"'d' is not one of target\.zones"):
        CapacityTestSpec.model_validate(
            {
                "target": {"command": ["t"], "resources": {"cpu": "1", "memory": "512Mi"}},
                "workload": {"model": "rate", "mix": [{"name": "w", "path": "/"}]},
                "trial": {"duration": "60s", "faults": [{"at": "30s", "remove": {"zone": "d"}}]},
                "search": {"strategy": "prove", "fromSizing": True},
                "sizing": {"peak": 2400, "zones": 3, "perPod": 1600},
            }
        )
