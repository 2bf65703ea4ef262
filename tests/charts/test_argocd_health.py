"""The Argo CD health check (charts/plimsoll/files/argocd-health.lua) under real Lua.

Argo CD runs health checks in gopher-lua, a Lua 5.1, with `obj` set to the live
object and without os/io; lupa's Lua 5.1 runtime, stripped the same way, runs
the shipped file against status fixtures built from the API models.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from lupa import lua51

from plimsoll.api.status import Phase
from tests.charts.helm import CHART
from tests.charts.status_fixtures import Fixture, fixtures

SCRIPT = (CHART / "files" / "argocd-health.lua").read_text()
SNIPPET = CHART / "files" / "argocd-cm-snippet.yaml"
ARGO_KEY = "resource.customizations.health.plimsoll.dev_CapacityTest"
EXPECTED_HEALTH = {
    Phase.PENDING: "Progressing",
    Phase.QUEUED: "Progressing",
    Phase.PROVISIONING: "Progressing",
    Phase.RUNNING: "Progressing",
    Phase.SUCCEEDED: "Healthy",
    Phase.FAILED: "Degraded",
}


def health(script: str, obj: dict[str, Any]) -> tuple[str, str]:
    lua = lua51.LuaRuntime(unpack_returned_tuples=True, register_eval=False)
    for unsafe in ("os", "io", "debug", "package", "require", "dofile", "loadfile"):
        lua.execute(f"{unsafe} = nil")
    lua.globals().obj = lua.table_from(obj, recursive=True)
    result = lua.execute(script)
    return str(result["status"]), str(result["message"])


FIXTURES = fixtures()


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_health_and_message(fixture: Fixture) -> None:
    assert health(SCRIPT, fixture.obj) == (fixture.health, fixture.message)


def test_every_phase_has_a_fixture_with_its_health() -> None:
    """A new phase in the API fails here until the health check and a fixture cover it."""
    assert set(EXPECTED_HEALTH) == set(Phase)
    covered = {f.phase for f in FIXTURES if f.phase is not None}
    assert covered == set(Phase)
    for fixture in FIXTURES:
        if fixture.phase is not None and not fixture.gated:
            assert fixture.health == EXPECTED_HEALTH[fixture.phase], fixture.name


def test_a_regression_is_degraded_only_while_true_a_proof_and_a_flight_while_false() -> None:
    gated = {f.name: f.health for f in FIXTURES if f.gated}
    assert gated == {
        "succeeded-regressed": "Degraded",
        "succeeded-within-noise": "Healthy",
        "succeeded-first-gated-run": "Healthy",
        "succeeded-proved": "Healthy",
        "succeeded-not-proved": "Degraded",
        "succeeded-flight-held": "Healthy",
        "succeeded-flight-not-held-recommended-true": "Degraded",
    }


def test_unknown_phase_is_reported_not_guessed() -> None:
    obj = {"metadata": {"generation": 1}, "status": {"phase": "Exploded"}}
    assert health(SCRIPT, obj) == ("Unknown", "Unknown phase Exploded")


def test_argocd_cm_snippet_ships_the_same_script() -> None:
    snippet = yaml.safe_load(SNIPPET.read_text())
    assert snippet["kind"] == "ConfigMap"
    assert snippet["metadata"]["name"] == "argocd-cm"
    assert snippet["data"][ARGO_KEY] == SCRIPT
    assert health(snippet["data"][ARGO_KEY], FIXTURES[0].obj)[0] == "Progressing"
