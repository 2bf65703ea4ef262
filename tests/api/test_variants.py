"""A variant changes what a comparison needs and inherits the rest; conflicts are named."""

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plimsoll.api import SpecError, load_capacity_test
from plimsoll.api.crd import render_crd
from plimsoll.cli.app import app
from tests.api.test_spec_errors import MINIMAL

STORE = {"name": "store", "command": ["store-server"], "port": 6390}
PG = {"name": "postgres", "command": ["postgres"], "port": 5432, "targetEnv": {"DB": "{host}"}}


def document(variants: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    doc = copy.deepcopy(MINIMAL)
    doc["spec"].update({"services": [STORE], "variants": variants, **spec})
    return doc


def problems(variants: list[dict[str, Any]], **spec: Any) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_capacity_test(document(variants, **spec))
    return caught.value.problems


def test_a_variant_changes_target_services_upstream_and_workload_and_inherits_the_rest() -> None:
    test = load_capacity_test(
        document(
            [
                {"name": "embedded"},
                {
                    "name": "postgres",
                    "image": "gateway:pg",
                    "command": ["./server", "--pg"],
                    "args": ["-v"],
                    "env": {"STORE": "pg"},
                    "resources": {"cpu": "2", "memory": "1Gi"},
                    "removeServices": ["store"],
                    "addServices": [PG],
                    "upstream": {"routes": [{"name": "slow", "path": "/slow"}]},
                    "workload": {"mix": [{"name": "get", "path": "/other"}]},
                },
            ],
            baseline="embedded",
        )
    )
    spec = test.spec
    embedded, postgres = (spec.for_variant(v) for v in spec.variants)
    assert embedded.target == spec.target
    assert [s.name for s in embedded.services] == ["store"]
    target = postgres.target
    assert (target.image, target.command) == ("gateway:pg", ["./server", "--pg"])
    assert target.args == ["-v"]
    assert target.env == {"STORE": "pg"}
    assert target.resources is not None
    assert (target.resources.cpu, target.resources.memory) == (2.0, 2**30)
    assert [s.name for s in postgres.services] == ["postgres"]
    assert [r.path for r in postgres.upstream.routes] == ["/slow"]
    assert postgres.workload.mix[0].path == "/other"
    assert postgres.trial == spec.trial  # not named by the variant: inherited
    assert postgres.search == spec.search
    assert spec.baseline_name == "embedded"
    assert spec.variant_specs() == {"embedded": embedded, "postgres": postgres}
    assert spec.model_copy(update={"variants": []}).variant_specs() == {
        "default": spec.model_copy(update={"variants": []})
    }


def test_a_service_added_under_an_inherited_name_replaces_it() -> None:
    bigger = {**STORE, "args": ["--maxmemory", "1gb"]}
    test = load_capacity_test(document([{"name": "big", "addServices": [bigger]}]))
    [service] = test.spec.variant_specs()["big"].services
    assert service.args == ["--maxmemory", "1gb"]
    assert test.spec.baseline_name == "big"  # the first variant when none is named


@pytest.mark.parametrize(
    ("variants", "spec", "hint"),
    [
        (
            [{"name": "a", "services": [PG], "removeServices": ["store"]}],
            {},
            "give either 'services' (the whole list) or 'addServices'/'removeServices'",
        ),
        ([{"name": "a", "removeServices": ["redis"]}], {}, "removeServices names ['redis']"),
        (
            [{"name": "a", "removeServices": ["store"], "addServices": [STORE]}],
            {},
            "to replace a service, list it in addServices only",
        ),
        ([{"name": "a"}], {"baseline": "b"}, "baseline 'b' names no variant"),
        (
            [{"name": "a", "workload": {"mix": [{"name": "other", "path": "/"}]}}],
            {"passWhen": {"latency": [{"operation": "get", "quantile": "p99", "below": "1s"}]}},
            "variants[0] (a): passWhen.latency names operation 'get'",
        ),
        (
            [{"name": "a", "workload": {"model": "users", "mix": [{"name": "get"}]}}],
            {},
            "variants are compared in one unit",
        ),
        (
            [{"name": "a", "resources": {"cpu": "1", "memory": "1Gi"}}],
            {"target": {"url": "http://127.0.0.1:9"}},
            "target.url drives a service that already runs",
        ),
        ([{"name": "a"}, {"name": "a"}], {}, "'a' is already the name of variants[0]"),
    ],
)
def test_conflicts_are_named_with_the_fix(
    variants: list[dict[str, Any]], spec: dict[str, Any], hint: str
) -> None:
    found = problems(variants, **spec)
    assert any(hint in line for line in found), found


def _rules(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [str(node["rule"])] if "rule" in node else []
        return own + [rule for value in node.values() for rule in _rules(value)]
    if isinstance(node, list):
        return [rule for item in node for rule in _rules(item)]
    return []


def test_the_crd_carries_the_conflict_rules_it_can_express() -> None:
    # The rules as the API server reads them (YAML may fold a long rule over lines).
    crd = "\n".join(_rules(yaml.safe_load(render_crd())))
    assert "self.variants.exists(v, v.name == self.baseline)" in crd
    assert "!has(self.services) || (!has(self.addServices) && !has(self.removeServices))" in crd


def test_validate_names_a_variant_conflict_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "conflict.yaml"
    path.write_text(yaml.safe_dump(document([{"name": "pg", "removeServices": ["redis"]}])))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "spec: variants[0] (pg): removeServices names ['redis']" in result.stderr


def test_an_extra_metric_is_read_only_in_the_variants_it_names() -> None:
    pg_calls = {
        "name": "pg-commits",
        "query": 'sum(up{namespace="$namespace"})',
        "variants": ["pg"],
    }
    everywhere = {"name": "cpu", "query": 'sum(up{namespace="$namespace"})'}
    test = load_capacity_test(
        document([{"name": "embedded"}, {"name": "pg"}], metrics={"extra": [pg_calls, everywhere]})
    )
    spec = test.spec
    assert [m.name for m in spec.variant_specs()["pg"].metrics.extra] == ["pg-commits", "cpu"]
    assert [m.name for m in spec.variant_specs()["embedded"].metrics.extra] == ["cpu"]
    wrong = {**pg_calls, "variants": ["postgres"]}
    assert problems([{"name": "pg"}], metrics={"extra": [wrong]}) == [
        "spec.metrics.extra[0].variants: ['postgres'] name no variant; the variants are ['pg']"
    ]


def test_a_service_is_told_its_port_and_an_earlier_ones() -> None:
    from plimsoll.api.target import Service

    exporter = Service.model_validate(
        {
            "name": "pg-exporter",
            "command": ["exporter", "--listen=127.0.0.1:{port}"],
            "env": {"DSN": "postgresql://127.0.0.1:{postgres.port}/db"},
            "port": 9187,
        }
    )
    assert exporter.names_its_port()
    moved = exporter.with_ports(40001, {"postgres": 40000})
    assert moved.port == 40001
    assert moved.command == ["exporter", "--listen=127.0.0.1:40001"]
    assert moved.env == {"DSN": "postgresql://127.0.0.1:40000/db"}
    assert not Service.model_validate({"name": "r", "command": ["r"], "port": 1}).names_its_port()
