"""Hostile and mistaken CapacityTests: each class refused with the field and the fix.

Every case is checked twice: by `plimsoll validate` (the CLI, on a real file, as
a user runs it) and by the generated CRD (`crd_checker`: the openAPIV3Schema with
jsonschema and the CEL rules with cel-python), so `kubectl apply` and `plimsoll
validate` agree. The file-level cases (size, encoding, duplicate keys, nesting,
alias bombs) concern the YAML file itself, before any schema: `plimsoll validate`
refuses them; on a cluster kubectl parses the YAML and sends JSON, where the API
server's own limits apply (duplicate fields under `--validate=strict`, the 3 MiB
request limit), which only a real API server can show.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plimsoll.cli.app import app
from plimsoll.cli.safe_yaml import MAX_DEPTH, MAX_FILE_BYTES
from tests.api.crd_checker import crd_problems

BASE: dict[str, Any] = {
    "apiVersion": "plimsoll.dev/v1alpha1",
    "kind": "CapacityTest",
    "metadata": {"name": "bad"},
    "spec": {
        "target": {"command": ["./server"], "resources": {"cpu": "1", "memory": "512Mi"}},
        "workload": {"mix": [{"name": "get", "path": "/"}]},
    },
}
CHAT = {"protocol": "openai", "mix": [{"name": "chat", "kind": "chat"}], "conversation": {}}


def _with(path: str, value: Any) -> dict[str, Any]:
    document = copy.deepcopy(BASE)
    node: Any = document
    *parents, leaf = path.split(".")
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[int(leaf) if leaf.isdigit() else leaf] = value
    return document


def _validate(tmp_path: Path, text: str | bytes) -> tuple[int, str]:
    spec = tmp_path / "spec.yaml"
    if isinstance(text, bytes):
        spec.write_bytes(text)
    else:
        spec.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(spec)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


# (id, document, the field the error names, words of the fix)
SCHEMA_CASES = [
    # Issue 53: a service named as a measured role was read as that role (a `mock-cache`
    # short of CPU made its steps invalid, as if the test's own mock had been).
    *(
        (
            f"service-named-{name}",
            _with("spec.services", [{"name": name, "command": ["./cache"], "port": 6379}]),
            "spec.services[0].name",
            "is reserved",
        )
        for name in ("mock-cache", "host", "generator2", "target")
    ),
    (
        "cpu-finer-than-a-millicore",
        _with("spec.target.resources.cpu", "0.0001"),
        "spec.target.resources.cpu",
        "millicore",
    ),
    (
        "cpu-zero-millicores",
        _with("spec.target.resources.cpu", "0m"),
        "spec.target.resources.cpu",
        "positive",
    ),
    (
        "cpu-absurd",
        _with("spec.target.resources.cpu", 100000),
        "spec.target.resources.cpu",
        "at most",
    ),
    ("port-true", _with("spec.target.port", True), "spec.target.port", "write a number"),
    ("duration-25h", _with("spec.trial", {"duration": "25h"}), "spec.trial.duration", "at most"),
    (
        "duration-1000000h",
        _with("spec.trial", {"duration": "1000000h"}),
        "spec.trial.duration",
        "at most",
    ),
    ("warm-up-2h", _with("spec.trial", {"warmUp": "2h"}), "spec.trial.warmUp", "at most 1h"),
    (
        "levels-1e12",
        _with("spec.search", {"strategy": "steps", "levels": [100, 10**12]}),
        "spec.search.levels[1]",
        "less than or equal to 10000000",
    ),
    (
        "start-1e12",
        _with("spec.search", {"start": 10**12, "limit": 10**12}),
        "spec.search.start",
        "less than or equal to 10000000",
    ),
    (
        "prompt-chars-1e9",
        _with("spec.workload", {**CHAT, "conversation": {"promptChars": 10**9}}),
        "spec.workload.conversation.promptChars",
        "less than or equal to 1000000",
    ),
    (
        "mock-response-1Ti",
        _with(
            "spec.upstream", {"routes": [{"name": "r", "path": "/", "sizes": [{"bytes": "1Ti"}]}]}
        ),
        "spec.upstream.routes[0].sizes[0].bytes",
        "64Mi",
    ),
    (
        "memory-100-bytes",
        _with("spec.target.resources.memory", "100"),
        "spec.target.resources.memory",
        "4Mi",
    ),
    (
        "memory-100-bytes-as-a-number",
        _with("spec.target.resources.memory", 100),
        "spec.target.resources.memory",
        "4Mi",
    ),
    (
        "memory-1000000Ti",
        _with("spec.target.resources.memory", "1000000Ti"),
        "spec.target.resources.memory",
        "64Ti",
    ),
    (
        "crlf-in-a-header-value",
        _with("spec.workload.mix.0.headers", {"X-Tenant": "a\r\nX-Injected: 1"}),
        "spec.workload.mix[0].headers.X-Tenant",
        "CR/LF",
    ),
    (
        "lf-in-a-path",
        _with("spec.workload.mix.0.path", "/a\nGET /b"),
        "spec.workload.mix[0].path",
        "CR/LF",
    ),
    (
        "space-in-a-path",
        _with("spec.workload.mix.0.path", "/a b"),
        "spec.workload.mix[0].path",
        "percent-encode",
    ),
    (
        "non-ascii-header-value",
        _with("spec.workload.mix.0.headers", {"X-City": "Zürich"}),
        "spec.workload.mix[0].headers.X-City",
        "non-ASCII",
    ),
    (
        "bad-header-name",
        _with("spec.workload.mix.0.headers", {"X Tenant:": "a"}),
        "spec.workload.mix[0].headers",
        "header name",
    ),
    (
        "infinite-weight",
        _with("spec.workload.mix.0.weight", math.inf),
        "spec.workload.mix[0].weight",
        "finite",
    ),
    (
        "huge-weight",
        _with("spec.workload.mix.0.weight", 1e300),
        "spec.workload.mix[0].weight",
        "less than or equal",
    ),
]


def test_the_base_document_is_valid_for_both(tmp_path: Path) -> None:
    code, output = _validate(tmp_path, yaml.safe_dump(BASE))
    assert code == 0, output
    assert crd_problems(copy.deepcopy(BASE)) == []


@pytest.mark.parametrize(
    ("document", "field", "hint"),
    [pytest.param(d, f, h, id=i) for i, d, f, h in SCHEMA_CASES],
)
def test_plimsoll_validate_names_the_field_and_the_fix(
    tmp_path: Path, document: dict[str, Any], field: str, hint: str
) -> None:
    code, output = _validate(tmp_path, yaml.safe_dump(document, allow_unicode=True))
    assert code == 2, output
    lines = [line.strip() for line in output.splitlines()]
    assert any(line.startswith(f"{field}:") and hint in line for line in lines), output


# Cases the CRD cannot state within the API server's CEL cost budget: the operator
# refuses them (`load_capacity_test`), so they end as SpecValid=False, not at apply.
MODEL_ONLY = {"bad-header-name"}


@pytest.mark.parametrize(
    ("document", "field"),
    [pytest.param(d, f, id=i) for i, d, f, _ in SCHEMA_CASES if i not in MODEL_ONLY],
)
def test_the_crd_refuses_it_too(document: dict[str, Any], field: str) -> None:
    # JSON has no infinity: kubectl cannot even send it; the schema's maximum refuses it too
    problems = crd_problems(document)
    assert any(p.startswith(field) for p in problems), problems


@pytest.mark.parametrize(
    "document", [pytest.param(d, id=i) for i, d, _, _ in SCHEMA_CASES if i in MODEL_ONLY]
)
def test_what_only_the_models_refuse_passes_the_crd(document: dict[str, Any]) -> None:
    assert crd_problems(document) == []


FILE_CASES = [
    ("not-utf-8", b"metadata: {name: caf\xe9}\n", "not UTF-8 text: byte 0xe9"),
    ("nested-10000-deep", "spec: " + "[" * 10_000 + "]" * 10_000 + "\n", "nested"),
    (
        "nested-100-deep",
        "spec: " + "{a: " * 100 + "1" + "}" * 100 + "\n",
        f"nested more than {MAX_DEPTH} levels",
    ),
    (
        "billion-laughs",
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n"
            for i in range(8)
        ),
        "YAML aliases",
    ),
    ("duplicate-keys", yaml.safe_dump(BASE) + "kind: CapacityTest\n", "appears twice"),
    ("over-1-MiB", "# " + "x" * MAX_FILE_BYTES + "\n" + yaml.safe_dump(BASE), "at most 1,048,576"),
]


@pytest.mark.parametrize(("text", "hint"), [pytest.param(t, h, id=i) for i, t, h in FILE_CASES])
def test_a_hostile_file_is_refused_with_the_reason(
    tmp_path: Path, text: str | bytes, hint: str
) -> None:
    code, output = _validate(tmp_path, text)
    assert code == 2, output
    assert hint in output
