"""Realistic mistakes in a CapacityTest each get an error naming the field and the fix."""

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.api import SpecError, load_capacity_test
from plimsoll.cli.spec_file import read_capacity_tests

EXAMPLES = Path(__file__).parents[2] / "examples"
# Example files that hold CapacityTests (others, such as an Argo CD Application, do not).
SPEC_FILES = sorted(p for p in EXAMPLES.glob("*.yaml") if "kind: CapacityTest" in p.read_text())

MINIMAL: dict[str, Any] = {
    "apiVersion": "plimsoll.dev/v1alpha1",
    "kind": "CapacityTest",
    "metadata": {"name": "minimal"},
    "spec": {
        "target": {"command": ["./server"], "resources": {"cpu": "1", "memory": "512Mi"}},
        "workload": {"mix": [{"name": "get", "path": "/"}]},
    },
}


def problems_of(change: dict[str, Any] | None = None, drop: str | None = None) -> list[str]:
    document = copy.deepcopy(MINIMAL)
    for path, value in (change or {}).items():
        node = document
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    if drop:
        *parents, leaf = drop.split(".")
        node = document
        for part in parents:
            node = node[part]
        del node[leaf]
    with pytest.raises(SpecError) as caught:
        load_capacity_test(document)
    return caught.value.problems


def test_the_minimal_spec_is_valid_and_defaults_fill_in() -> None:
    test = load_capacity_test(copy.deepcopy(MINIMAL))
    assert test.spec.target.resources is not None
    assert test.spec.target.resources.memory == 512 * 2**20
    assert test.spec.trial.duration == 60.0
    assert test.spec.unit == "rps"


@pytest.mark.parametrize(
    ("change", "drop", "field", "hint"),
    [
        ({"spec.trial": {"duration": "-30s"}}, None, "spec.trial.duration", "positive"),
        ({"spec.trial": {"duration": "0s"}}, None, "spec.trial", "longer than zero"),
        (
            {"spec.passWhen": {"latency": [{"quantile": "p150", "below": "1s"}]}},
            None,
            "spec.passWhen.latency[0].quantile",
            "strictly between",
        ),
        (  # 500 would be 500 seconds: a bar that passes every level (issue 55)
            {"spec.passWhen": {"latency": [{"quantile": "p99", "below": 500}]}},
            None,
            "spec.passWhen.latency[0].below",
            "500 is a bare number, which would mean 500 seconds: write the unit, 500ms or 500s",
        ),
        (
            {"spec.passWhen": {"errors": {"transport": "150%"}}},
            None,
            "spec.passWhen.errors.transport",
            "between 0% and 100%",
        ),
        (
            {"spec.search": {"floor": 5000, "limit": 100, "start": 100}},
            None,
            "spec.search",
            "'floor' (5000) must be below 'limit' (100)",
        ),
        (
            {"spec.workload": {"protocol": "grpc", "mix": [{"name": "a"}]}},
            None,
            "spec.workload.protocol",
            "'grpc' is not one of",
        ),
        ({}, "spec.target", "spec.target", "required field is missing"),
        (
            {"spec.target": {"command": ["x"], "resources": {"cpu": "1", "memory": "512MB"}}},
            None,
            "spec.target.resources.memory",
            "did you mean '512Mi'",
        ),
        (
            {"spec.target": {"command": ["x"], "resources": {"cpu": "one", "memory": "1Gi"}}},
            None,
            "spec.target.resources.cpu",
            "millicores",
        ),
        (
            {"spec.target": {"port": 8080, "resources": {"cpu": "1", "memory": "1Gi"}}},
            None,
            "spec.target",
            "say how to run the target",
        ),
        (
            {"spec.search": {"strategy": "steps"}},
            None,
            "spec.search",
            "needs 'levels'",
        ),
        (
            {"spec.trial": {"duraton": "30s"}},
            None,
            "spec.trial.duraton",
            "unknown field",
        ),
        (
            {
                "spec.passWhen": {
                    "latency": [{"operation": "post", "quantile": "p99", "below": "1s"}]
                }
            },
            None,
            "spec",
            "names operation 'post', which is not in workload.mix",
        ),
        (
            {"spec.workload": {"protocol": "openai", "mix": [{"name": "chat", "kind": "chat"}]}},
            None,
            "spec.workload",
            "needs 'conversation'",
        ),
        (
            {"spec.upstream": {"routes": [{"name": "r", "path": "/", "latency": {"p50": "2s"}}]}},
            None,
            "spec.upstream.routes[0].latency",
            "needs both 'p50' and 'p95'",
        ),
        ({"apiVersion": "plimsoll.dev/v1"}, None, "apiVersion", "plimsoll.dev/v1alpha1"),
        (
            {"spec.upstreams": [{"name": "auth", "envVar": "AUTH_URL"}] * 2},
            None,
            "spec.upstreams[1].name",
            "'auth' is already the name of upstreams[0]: give each mock a name of its own",
        ),
        (
            {"spec.upstreams": [{"name": "auth", "envVar": "UPSTREAM_URL"}]},
            None,
            "spec.upstreams[0].envVar",
            "UPSTREAM_URL is already set by target.upstreamEnv",
        ),
        (
            {
                "spec.target": {**MINIMAL["spec"]["target"], "env": {"AUTH_URL": "x"}},
                "spec.upstreams": [{"name": "auth", "envVar": "AUTH_URL"}],
            },
            None,
            "spec.upstreams[0].envVar",
            "AUTH_URL is already set by target.env",
        ),
        (
            {"spec.upstreams": [{"name": "a", "envVar": "A"}, {"name": "b", "envVar": "A"}]},
            None,
            "spec.upstreams[1].envVar",
            "A is already set by upstreams[0] (a)",
        ),
        (
            {"spec.upstreams": [{"name": "auth", "envVar": "AUTH-URL"}]},
            None,
            "spec.upstreams[0].envVar",
            "",
        ),
        ({"spec.upstreams": [{"name": "Auth", "envVar": "A"}]}, None, "spec.upstreams[0].name", ""),
        ({"spec.regression": {"baseline": "0"}}, None, "spec.regression.baseline", ""),
        ({"spec.regression": {"baseline": "000"}}, None, "spec.regression.baseline", ""),
        (
            {"spec.schedule": {"cron": "* * * * *"}},
            None,
            "spec.schedule.cron",
            "fires 1 minute(s) apart: at most every 5 minutes",
        ),
        (
            {"spec.schedule": {"cron": "0,2 3 * * *"}},
            None,
            "spec.schedule.cron",
            "fires 2 minute(s) apart",
        ),
        (
            {"spec.schedule": {"cron": "0,59 0,23 * * *"}},  # 23:59, then 00:00 the next day
            None,
            "spec.schedule.cron",
            "fires 1 minute(s) apart",
        ),
        (
            {"spec.target.resources": {"cpu": "1", "memory": "\u0665\u0661\u0662Mi"}},
            None,
            "spec.target.resources.memory",
            "",
        ),
    ],
)
def test_a_mistake_names_its_field_and_the_fix(
    change: dict[str, Any], drop: str | None, field: str, hint: str
) -> None:
    problems = problems_of(change, drop)
    assert any(p.startswith(f"{field}:") and hint in p for p in problems), problems


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.name)
def test_every_example_validates(path: Path) -> None:
    tests = read_capacity_tests(path)
    assert tests, path


def test_a_yaml_syntax_error_is_reported_with_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("spec: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        read_capacity_tests(broken)


def test_the_spec_round_trips_through_its_wire_form() -> None:
    assert len(SPEC_FILES) >= 4
    for path in SPEC_FILES:
        for test in read_capacity_tests(path):
            again = load_capacity_test(yaml.safe_load(yaml.safe_dump(test.to_wire())))
            assert again.model_dump() == test.model_dump()


BODY_SIZES = [{"size": "1Ki", "weight": 90}, {"size": "64Ki", "weight": 10}]


def test_a_body_size_mix_parses_its_sizes() -> None:
    document = copy.deepcopy(MINIMAL)
    document["spec"]["workload"]["mix"] = [
        {"name": "upload", "method": "POST", "path": "/u", "bodySizes": BODY_SIZES}
    ]
    (op,) = load_capacity_test(document).spec.workload.mix
    assert [(s.size, s.weight) for s in op.body_sizes or []] == [(1024, 90), (65536, 10)]


@pytest.mark.parametrize(
    ("operation", "field", "words"),
    [
        ({"method": "GET"}, "mix[0]", "needs a method that sends a body (POST, PUT, PATCH)"),
        ({"method": "POST", "body": "{}"}, "mix[0]", "'bodySizes' and 'body' both give the body"),
        (
            {"method": "POST", "bodySizes": [{"size": "5Mi"}]},
            "mix[0].bodySizes[0].size",
            "generator holds each body size in memory",
        ),
        ({"method": "POST", "bodySizes": [{"size": 0}]}, "mix[0].bodySizes[0].size", ""),
        ({"method": "POST", "bodySizes": []}, "mix[0].bodySizes", ""),
    ],
)
def test_a_bad_body_size_mix_names_the_field_and_the_fix(
    operation: dict[str, Any], field: str, words: str
) -> None:
    op = {"name": "upload", "path": "/u", "bodySizes": BODY_SIZES, **operation}
    problems = problems_of({"spec.workload.mix": [op]})
    assert any(p.startswith(f"spec.workload.{field}") and words in p for p in problems), problems


def test_body_sizes_are_refused_on_a_list_or_chat() -> None:
    op = {"name": "list", "kind": "list", "bodySizes": BODY_SIZES}
    problems = problems_of({"spec.workload.protocol": "mcp", "spec.workload.mix": [op]})
    assert any("kind 'list' builds its own body: remove 'bodySizes'" in p for p in problems)


def test_named_mocks_are_valid_beside_the_default() -> None:
    document = copy.deepcopy(MINIMAL)
    document["spec"]["upstreams"] = [
        {"name": "auth", "envVar": "AUTH_URL", "routes": [{"name": "check", "path": "/check"}]},
        {"name": "metering", "envVar": "METERING_URL"},
    ]
    spec = load_capacity_test(document).spec
    assert [u.name for u in spec.upstreams] == ["auth", "metering"]
    assert spec.upstreams[0].upstream().routes[0].path == "/check"
    assert spec.upstream.routes == []  # the default mock is still there, unchanged


def test_a_flight_names_each_part_it_lacks_and_what_it_cannot_have() -> None:
    """Issue 57: a flight needs its autoscaler, its profile and its per-pod ceiling, and
    leaves the replicas to the autoscaler; the parts make no sense without a flight."""
    base = {**MINIMAL["spec"], "search": {"strategy": "autoscale"}}
    with pytest.raises(SpecError) as raised:
        load_capacity_test({**MINIMAL, "spec": base})
    text = "\n".join(raised.value.problems)
    for part in ("target.autoscaler", "workload.profile", "autoscale"):
        assert f"search.strategy autoscale: needs {part}" in text, text
    assert "passWhen.latency: a flight is judged by the seconds p99 spent over the bar" in text
    stray = {**MINIMAL["spec"], "autoscale": {"perPod": 25}}
    with pytest.raises(SpecError) as raised:
        load_capacity_test({**MINIMAL, "spec": stray})
    assert any(
        "autoscale: applies to search.strategy autoscale" in p for p in raised.value.problems
    )
