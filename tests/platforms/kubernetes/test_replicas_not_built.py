"""Replicas, zones and faults are refused on Kubernetes, naming the field, not ignored;
`generators.replicas: auto` is built there."""

from __future__ import annotations

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.platforms.kubernetes.platform import _replicas_not_built


def test_replicas_zones_and_faults_are_refused_with_the_field_named() -> None:
    spec = CapacityTestSpec.model_validate(
        {
            "target": {
                "image": "example/app:1",
                "resources": {"cpu": "0.25", "memory": "64Mi"},
                "replicas": 3,
                "zones": ["a", "b", "c"],
            },
            "workload": {"model": "rate", "mix": [{"name": "w", "path": "/w"}]},
            "trial": {"duration": "10s", "faults": [{"at": "3s", "remove": {"zone": "a"}}]},
        }
    )
    problems = _replicas_not_built(spec)
    assert [p.split(" ")[0] for p in problems] == [
        "target.replicas:",
        "target.zones",
        "trial.faults",
    ]
    assert all("not built yet on Kubernetes" in p for p in problems)


def test_one_replica_without_faults_passes() -> None:
    spec = CapacityTestSpec.model_validate(
        {
            "target": {"image": "example/app:1", "resources": {"cpu": "0.25", "memory": "64Mi"}},
            "workload": {"model": "rate", "mix": [{"name": "w", "path": "/w"}]},
        }
    )
    assert _replicas_not_built(spec) == []


def test_generators_auto_is_accepted_on_kubernetes_and_unset_runs_one_pod() -> None:
    base = {
        "target": {"image": "example/app:1", "resources": {"cpu": "0.25", "memory": "64Mi"}},
        "workload": {"model": "rate", "mix": [{"name": "w", "path": "/w"}]},
    }
    for generators in ({"replicas": "auto"}, {"processes": "auto"}):
        spec = CapacityTestSpec.model_validate({**base, "generators": generators})
        assert _replicas_not_built(spec) == []
    unset = CapacityTestSpec.model_validate(base)
    assert _replicas_not_built(unset) == []
    assert unset.generators.fixed_replicas == 1
