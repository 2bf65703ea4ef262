"""The admin's limits on one run: each is named with its value when a spec goes past it
(issue 52: a run's quota came from the tenant's own spec, so one valid CR asked for 338
pods, 235,579 cores and 1.4 PiB, or 16 variants of 500 trials of 6 hours)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from plimsoll.api import load_capacity_test
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.run_budget import run_budget
from plimsoll.decide.run_limits import RunLimits, limit_problems
from plimsoll.kube.manifests import KNOWN_SHAPES
from tests.charts.helm import objects, one
from tests.controller.conftest import quickstart


def _views(edit: dict[str, Any]) -> list[CapacityTestSpec]:
    body = quickstart("limits", None)
    for path, value in edit.items():
        node = body["spec"]
        *parents, last = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return list(load_capacity_test(body).spec.variant_specs().values())


def _problems(edit: dict[str, Any], limits: RunLimits | None = None) -> list[str]:
    views = _views(edit)
    return limit_problems(views, run_budget(views, KNOWN_SHAPES), limits or RunLimits())


def test_the_quickstart_fits_the_defaults() -> None:
    assert _problems({}) == []


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ({"target.replicas": 16, "generators": {"replicas": 30}}, "limits.pods = 40"),
        ({"target.resources": {"cpu": "9999", "memory": "1Gi"}}, "limits.cpu = 32"),
        ({"target.resources": {"cpu": "1", "memory": "60Ti"}}, "limits.memory = 64Gi"),
        ({"generators": {"replicas": "auto", "maxReplicas": 256}}, "limits.generators = 16"),
        (
            {"variants": [{"name": f"v{i}"} for i in range(16)], "search.maxTrials": 500},
            "limits.trials = 400",
        ),
        ({"trial.duration": "6h", "search.maxTrials": 100}, "limits.duration = 12h"),
    ],
    ids=["pods", "cpu", "memory", "generators", "trials", "duration"],
)
def test_a_spec_past_a_limit_is_refused_naming_the_limit_and_its_value(
    edit: dict[str, Any], named: str
) -> None:
    problems = _problems(edit)
    assert any(named in p and p.startswith("spec: the run needs") for p in problems), problems


def test_the_admin_sets_the_limits_by_the_charts_names() -> None:
    limits = RunLimits.from_values({"pods": 3, "cpu": "500m", "duration": "1m"})
    assert (limits.pods, limits.cpu, limits.duration) == (3, 0.5, 60.0)
    assert any("limits.pods = 3" in p for p in _problems({}, limits))
    with pytest.raises(ValueError, match=r"limits\.podz"):
        RunLimits.from_values({"podz": 1})
    with pytest.raises(ValueError, match=r"limits\.memory"):
        RunLimits.from_values({"memory": "lots"})
    with pytest.raises(ValueError, match=r"limits\.pods"):
        RunLimits.from_values({"pods": True})


def test_the_charts_defaults_are_the_operators() -> None:
    """The chart passes its `limits` as PLIMSOLL_LIMITS; its defaults and the code's agree."""
    deployment = one(objects({}), "Deployment")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    [value] = [e["value"] for e in env if e["name"] == "PLIMSOLL_LIMITS"]
    assert RunLimits.from_values(json.loads(value)) == RunLimits()
