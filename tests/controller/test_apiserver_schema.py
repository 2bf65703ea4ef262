"""What only a real API server proves about the CRD: it is structural, its schema and
CEL rules reject a bad spec at `kubectl apply` naming the field, its printer columns
show the answer, and its status subresource keeps spec and status apart.

No operator runs here: these are the API server's own answers to the generated CRD
(`crds/capacitytest.yaml`, installed once per session by `apiserver_fixtures.py`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.controller.apiserver_fixtures import ApiServer
from tests.controller.conftest import quickstart
from tests.localrun import ROOT

Edit = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Edit:
    def edit(spec: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for part in parents:
            spec = spec.setdefault(part, {})
        spec[last] = value

    return edit


def _drop(*paths: str) -> Edit:
    def edit(spec: dict[str, Any]) -> None:
        for path in paths:
            *parents, last = path.split(".")
            inner = spec
            for part in parents:
                inner = inner[part]
            del inner[last]

    return edit


# (what is wrong, the edit to a valid spec, what the API server's message must contain)
BAD_SPECS: list[tuple[str, Edit, list[str]]] = [
    ("duration", _set("trial.duration", "soon"), ["spec.trial.duration", "should match"]),
    ("cpu", _set("target.resources.cpu", "lots"), ["spec.target.resources.cpu"]),
    ("memory", _set("target.resources.memory", "big"), ["spec.target.resources.memory"]),
    ("path", _set("workload.mix", [{"name": "w", "path": "work"}]), ["spec.workload.mix[0].path"]),
    ("model", _set("workload.model", "lottery"), ["spec.workload.model", "Unsupported value"]),
    ("trials", _set("search.maxTrials", 1000), ["spec.search.maxTrials", "less than or equal"]),
    (
        "target",
        _drop("target.command", "target.image"),
        ["spec.target", "say how to run the target: image, command, fromDeployment or url"],
    ),
    (
        "resources",
        _drop("target.resources"),
        ["spec.target", "resources (cpu and memory) are required to pin the target"],
    ),
    (
        "floor",
        _set("search", {"strategy": "doubling", "floor": 50, "limit": 10}),
        ["spec.search", "floor must be below limit"],
    ),
    ("levels", _drop("search.levels"), ["spec.search", "strategy 'steps' needs levels"]),
    (
        "url-and-command",
        _set("target.url", "http://127.0.0.1:8080"),
        ["spec.target", "give either url (an existing service) or image/command"],
    ),
    (
        "service",
        _set("services", [{"name": "db", "port": 5432}]),
        ["spec.services[0]", "a service needs image or command"],
    ),
    (
        "promql",
        _set("passWhen.promql", [{"name": "q", "query": "up"}]),
        ["spec.passWhen.promql[0]", "needs below or above"],
    ),
    ("unknown", _set("trial.durration", "3s"), ['unknown field "spec.trial.durration"']),
]


def test_the_crd_is_structural_and_established(apiserver: ApiServer) -> None:
    crd = json.loads(
        apiserver.plane.kubectl("get", "crd", "capacitytests.plimsoll.dev", "-o", "json").stdout
    )
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert conditions.get("NonStructuralSchema", "False") == "False", crd["status"]


@pytest.mark.parametrize(("case", "edit", "expected"), BAD_SPECS, ids=[c[0] for c in BAD_SPECS])
def test_a_bad_spec_is_rejected_at_apply_naming_the_field(
    apiserver: ApiServer, case: str, edit: Edit, expected: list[str]
) -> None:
    body = quickstart(f"bad-{case}", None)
    body["metadata"]["namespace"] = apiserver.namespace
    edit(body["spec"])
    result = apiserver.plane.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(body), check=False)
    assert result.returncode != 0, f"{case}: the API server accepted it"
    for text in expected:
        assert text in result.stderr, result.stderr


def test_the_valid_spec_these_start_from_and_every_example_are_accepted(
    apiserver: ApiServer,
) -> None:
    bodies = [copy.deepcopy(quickstart("good", None))]
    for example in sorted((ROOT / "examples").glob("*.yaml")):
        docs = yaml.safe_load_all(example.read_text())
        bodies += [d for d in docs if d and d.get("kind") == "CapacityTest"]
    assert len(bodies) > 3
    for body in bodies:
        body["metadata"]["namespace"] = apiserver.namespace
        apply = ["apply", "--dry-run=server", "-f", "-"]
        apiserver.plane.kubectl(*apply, stdin=yaml.safe_dump(body))


async def test_printer_columns_and_the_status_subresource(apiserver: ApiServer) -> None:
    created = await apiserver.apply(quickstart("cols", None))
    path = apiserver.path("cols")
    status = {"phase": "Succeeded", "stepCount": 3, "observedGeneration": 1}
    status["ceiling"] = {"level": 40, "unit": "rps", "limitedBy": "cpu", "complete": True}
    # Through the status subresource the status changes and the spec cannot.
    patched = await apiserver.api.patch(
        f"{path}/status", {"status": status, "spec": {"trial": {"duration": "9s"}}}
    )
    assert patched["status"]["phase"] == "Succeeded"
    assert patched["spec"]["trial"]["duration"] == "3s"
    assert patched["metadata"]["generation"] == created["metadata"]["generation"] == 1
    # Through the resource itself the spec changes (a new generation) and the status cannot.
    patched = await apiserver.api.patch(
        path, {"status": {"phase": "Pending"}, "spec": {"trial": {"duration": "4s"}}}
    )
    assert patched["status"]["phase"] == "Succeeded"
    assert patched["metadata"]["generation"] == 2
    table = apiserver.plane.kubectl("get", "capacitytest", "cols", "-n", apiserver.namespace)
    header, row = (line.split() for line in table.stdout.splitlines())
    assert header == [
        "NAME", "PHASE", "CEILING", "UNIT", "LIMITED-BY", "CHANGE", "STEPS", "VARIANTS", "PROVED",
        "FLIGHT", "AGE",
    ]  # fmt: skip
    assert row[:6] == ["cols", "Succeeded", "40", "rps", "cpu", "3"]
