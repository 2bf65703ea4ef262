"""trial.faults and target.replicas: bad input gets an error naming the field and the fix."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from plimsoll.api.spec import CapacityTestSpec


def _spec(target: dict[str, Any], faults: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "target": {"command": ["python", "t.py"], "resources": {"cpu": "0.25", "memory": "64Mi"}}
        | target,
        "workload": {"model": "rate", "mix": [{"name": "w", "path": "/w"}]},
        "trial": {"duration": "10s", "faults": faults},
    }


def test_a_kill_and_a_zone_removal_validate() -> None:
    spec = CapacityTestSpec.model_validate(
        _spec(
            {"replicas": 3, "zones": ["a", "b", "c"]},
            [{"at": "3s", "kill": {"replicas": 1}}, {"at": "5s", "remove": {"zone": "b"}}],
        )
    )
    assert [f.describe() for f in spec.trial.faults] == [
        "1 replica killed at 3 s",
        "zone b lost at 5 s",
    ]


def test_a_removed_zone_may_be_restored_later() -> None:
    spec = CapacityTestSpec.model_validate(
        _spec(
            {"replicas": 3, "zones": ["a", "b", "c"]},
            [{"at": "3s", "remove": {"zone": "b"}}, {"at": "6s", "restore": {"zone": "b"}}],
        )
    )
    assert spec.trial.faults[1].describe() == "zone b restored at 6 s"


@pytest.mark.parametrize(
    ("target", "faults", "message"),
    [
        ({"replicas": 2}, [{"at": "3s", "kill": {"replicas": 2}}], "trial.faults[0].kill.replicas"),
        ({"replicas": 2, "zones": ["a", "b"]}, [{"at": "3s", "remove": {"zone": "z"}}], "'z'"),
        ({"replicas": 2}, [{"at": "30s", "kill": {}}], "make 'at' shorter than 'duration'"),
        ({"replicas": 2}, [{"at": "3s"}], "exactly one of kill, remove or restore"),
        (
            {"replicas": 2, "zones": ["a", "b"]},
            [{"at": "3s", "restore": {"zone": "a"}}],
            "trial.faults[0].restore.zone: no earlier fault removes zone 'a'",
        ),
        ({"replicas": 1, "zones": ["a", "b"]}, [], "set replicas to 2 or more"),
        ({"replicas": 2, "zones": ["a", "a"]}, [], "names each zone once"),
    ],
)
def test_bad_faults_and_replicas_name_the_field(
    target: dict[str, Any], faults: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        CapacityTestSpec.model_validate(_spec(target, faults))
    assert message in str(caught.value)
