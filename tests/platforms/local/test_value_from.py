"""`plimsoll run` has no cluster: `valueFrom` stands for a variable the caller exported."""

from __future__ import annotations

from plimsoll.platforms.local.pieces import missing_value_from
from tests.api.test_env_source import CONFIG, SECRET, load


def test_an_exported_variable_satisfies_value_from_and_a_missing_one_is_named() -> None:
    service = {"name": "db", "command": ["db"], "port": 5432, "valueFrom": {"PW": SECRET}}
    spec = load({"command": ["app"], "valueFrom": {"MODE": CONFIG}}, services=[service])
    assert missing_value_from(spec, {"MODE": "fast", "PW": "x"}) is None
    refused = missing_value_from(spec, {"MODE": "fast"})
    assert refused is not None
    assert refused.startswith("spec.services[db].valueFrom.PW: reads a Secret or ConfigMap")
    assert "export PW before `plimsoll run`" in refused
