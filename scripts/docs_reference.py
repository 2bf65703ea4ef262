"""The docs site's reference pages, generated at build time (mkdocs-gen-files runs this).

Written by hand, a reference drifts from the code it describes; generated, it cannot.
Each page here is derived from the thing it documents:

- the CapacityTest fields and the status fields from the pydantic models' JSON Schema
  (the same schema the CRD is generated from), one section per model;
- the command line from the typer app, as click renders each command's help;
- the operator's metrics from the exposition a fresh registry writes;
- the Helm values from the comments above each key in `charts/plimsoll/values.yaml`.

A field or a Helm value without a description stops the build (`DescriptionMissingError`),
so `make docs` fails the day someone adds one without saying what it is for.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import mkdocs_gen_files
import typer.main
import yaml
from typer.testing import CliRunner

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import PHASE_TRANSITIONS, CapacityTestStatus
from plimsoll.cli.app import app
from plimsoll.cli.kubectl import app as kubectl_app
from plimsoll.controller.operator_metrics import OperatorMetrics

ROOT = Path(__file__).resolve().parents[1]
VALUES = ROOT / "charts" / "plimsoll" / "values.yaml"
_DURATION = "(us|"


class DescriptionMissingError(Exception):
    """A documented thing has nothing to say about itself: describe it where it is defined."""


def _ref_name(node: dict[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    for option in node.get("anyOf", []):
        if "$ref" in option:
            return str(option["$ref"]).rsplit("/", 1)[-1]
    return None


def _type_of(node: dict[str, Any], defs: dict[str, Any]) -> str:
    ref = _ref_name(node)
    if ref and "properties" in defs.get(ref, {}):
        return f"[{ref}](#{ref.lower()})"
    if ref:  # an enum: its values are listed under limits
        return str(defs.get(ref, {}).get("type", "string"))
    if "anyOf" in node:
        kinds = [_type_of(o, defs) for o in node["anyOf"] if o.get("type") != "null"]
        return " or ".join(kinds)
    kind = node.get("type", "any")
    if kind == "array":
        return f"list of {_type_of(node.get('items', {}), defs)}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map of {_type_of(node['additionalProperties'], defs)}"
    if kind == "string" and _DURATION in node.get("pattern", ""):
        return "duration"
    return str(kind)


def _limits(node: dict[str, Any], defs: dict[str, Any]) -> str:
    parts: list[str] = []
    ref = _ref_name(node)
    enum = node.get("enum") or (defs.get(ref, {}).get("enum") if ref else None)
    if enum:
        parts.append("one of " + ", ".join(f"`{v}`" for v in enum))
    for key, word in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤")):
        if key in node:
            parts.append(f"{word} {node[key]}")
    if "exclusiveMaximum" in node:
        parts.append(f"< {node['exclusiveMaximum']}")
    if "maxItems" in node:
        parts.append(f"at most {node['maxItems']} entries")
    for rule in node.get("x-kubernetes-validations", []):
        parts.append(str(rule["message"]))
    return "; ".join(parts)


def _default(node: dict[str, Any]) -> str:
    if "default" not in node or node["default"] is None:
        return ""
    value = node["default"]
    if _DURATION in node.get("pattern", "") and isinstance(value, int | float):
        return f"`{value:g}s`"
    return f"`{json.dumps(value)}`"


def _description(name: str, node: dict[str, Any], defs: dict[str, Any], where: str) -> str:
    text = node.get("description")
    ref = _ref_name(node)
    if not text and ref:
        text = defs.get(ref, {}).get("description")
    if not text:
        raise DescriptionMissingError(
            f"{where}.{name} has no description: add a docstring under the field "
            "(or its model) in operator/plimsoll/api/"
        )
    return " ".join(str(text).split())


def model_sections(schema: dict[str, Any], root: str) -> str:
    """One Markdown section per model, the root first, the rest in reading order."""
    defs: dict[str, Any] = schema.get("$defs", {})
    order: list[str] = []
    tables = {root: schema, **defs}

    def visit(name: str) -> None:
        if name in order:
            return
        order.append(name)
        for node in tables[name].get("properties", {}).values():
            for child in _refs_in(node):
                if "properties" in tables.get(child, {}):
                    visit(child)

    visit(root)
    out: list[str] = []
    missing: list[str] = []
    for name in order:
        model = tables[name]
        out.append(f"## {name}\n")
        if model.get("description"):
            out.append(" ".join(str(model["description"]).split()) + "\n")
        out.append("| field | type | default | limits | what it says |")
        out.append("| --- | --- | --- | --- | --- |")
        for field, node in model.get("properties", {}).items():
            try:
                description = _description(field, node, defs, name)
            except DescriptionMissingError as exc:
                missing.append(str(exc))
                continue
            limits = _limits(node, defs)
            row = [f"`{field}`", _type_of(node, defs), _default(node), limits, description]
            out.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        out.append("")
    if missing:
        raise DescriptionMissingError("\n".join(missing))
    return "\n".join(out)


def _refs_in(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [str(node["$ref"]).rsplit("/", 1)[-1]] if "$ref" in node else []
        for value in node.values():
            found += _refs_in(value)
        return found
    if isinstance(node, list):
        return [ref for item in node for ref in _refs_in(item)]
    return []


def capacitytest_page() -> str:
    schema = CapacityTestSpec.model_json_schema(by_alias=True, mode="validation")
    return (
        "# CapacityTest fields\n\n"
        "Generated from the pydantic models in `operator/plimsoll/api/`, the same schema "
        "`plimsoll crd` turns into the CustomResourceDefinition. Durations are written "
        "`250ms`, `1.2s`, `5m`; memory `512Mi`; CPU `1` or `500m`; shares `0.5%`; "
        "quantiles `p95`, `p99.9`. `plimsoll validate FILE` checks a file the way the "
        "operator does.\n\n" + model_sections(schema, "CapacityTestSpec")
    )


def status_page() -> str:
    schema = CapacityTestStatus.model_json_schema(by_alias=True, mode="serialization")
    moves = [
        f"| {phase.value} | {', '.join(sorted(p.value for p in nexts))} |"
        for phase, nexts in PHASE_TRANSITIONS.items()
    ]
    return (
        "# Status fields\n\n"
        "What the operator writes under `status`, generated from "
        "`plimsoll.api.status`. The phases and the moves between them "
        "(`PHASE_TRANSITIONS`, the only moves a handler may make):\n\n"
        "| phase | may move to |\n| --- | --- |\n" + "\n".join(moves) + "\n\n"
        "The conditions and what each reason means are in "
        "[Phases and conditions](phases.md).\n\n" + model_sections(schema, "CapacityTestStatus")
    )


def _command_help(command: Any, path: list[str], of: typer.Typer = app) -> list[str]:
    # The help exactly as a user sees it at 80 columns, through typer's own test runner.
    shown = CliRunner().invoke(
        of, [*path[1:], "--help"], env={"COLUMNS": "80"}, color=False, prog_name=path[0]
    )
    if shown.exit_code != 0:
        raise RuntimeError(f"{' '.join(path)} --help failed: {shown.output}")
    out = [f"## `{' '.join(path)}`\n", "```text", shown.output.rstrip(), "```\n"]
    # typer carries its own copy of click, so a group is known by its commands, not its class.
    for name, sub in getattr(command, "commands", {}).items():
        if not sub.hidden:
            out += _command_help(sub, [*path, name], of)
    return out


_CODES = [
    (
        "0",
        "answered, and within the bar: every variant found its ceiling, at or above "
        "`--fail-below`, no regression beyond `--fail-on-regression`, the proof held",
    ),
    (
        "1",
        "could not complete: the run failed or stopped early (a range only), a gate could "
        "not compare, `wait` saw no answer within `--timeout`; the reason is printed",
    ),
    ("2", "invalid spec or command line: each mistake is printed with its field or flag"),
    (
        "99",
        "answered, but the answer is no: a ceiling below `--fail-below` (or no level passed "
        "at all), a regression beyond the threshold and outside noise, a proof that did not "
        "hold",
    ),
]
EXIT_CODES = (
    "## Exit codes\n\n"
    "`plimsoll run`, `plimsoll compare` and `kubectl plimsoll wait` exit with one code per "
    'outcome, so a pipeline tells "the service got worse" from "the run broke" '
    "(`operator/plimsoll/cli/exits.py`; the rule is `plimsoll.decide.pipeline_gate`):\n\n"
    "| code | meaning |\n| --- | --- |\n"
    + "".join(f"| {code} | {meaning} |\n" for code, meaning in _CODES)
    + "\nA run that could not complete exits 1 even when a bar would also have refused it: "
    "nothing was answered. `plimsoll run --junit FILE` writes the same cases as JUnit XML, "
    "one test case per variant's ceiling (or the proof): a `<failure>` for a 99, an "
    "`<error>` for a case that could not be judged.\n"
)


def cli_page() -> str:
    root = typer.main.get_command(app)
    plugin = typer.main.get_command(kubectl_app)
    return (
        "# Command line\n\n"
        "Every `plimsoll` and `kubectl plimsoll` command with the help it prints "
        "(generated from the typer apps in `operator/plimsoll/cli/`). Every duration flag "
        "takes the spec's units (`20s`, `500ms`, `2m`); a bare number is seconds.\n\n"
        + EXIT_CODES
        + "\n"
        + "\n".join(_command_help(root, ["plimsoll"]))
        + "\n"
        + "\n".join(_command_help(plugin, ["kubectl plimsoll"], kubectl_app))
    )


def metrics_page() -> str:
    exposition = OperatorMetrics().render()
    rows = []
    for line in exposition.splitlines():
        match = re.match(r"# HELP (\S+) (.*)", line)
        if match:
            rows.append(f"| `{match[1]}` | {match[2]} |")
    return (
        "# Operator metrics\n\n"
        "What `plimsoll operator --metrics-port PORT` serves, generated from the "
        "exposition a fresh operator writes (`plimsoll.controller.operator_metrics`). The "
        "command-line flags are in [Command line](cli.md#plimsoll-operator).\n\n"
        "| metric | meaning |\n| --- | --- |\n" + "\n".join(rows) + "\n"
    )


def helm_values(text: str) -> list[tuple[str, str, str]]:
    """(dotted key, default, the comment block above it) for each leaf value."""
    rows: list[tuple[str, str, str]] = []
    comment: list[str] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped:
            comment = []
            continue
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip())
            continue
        match = re.match(r"^(\s*)([A-Za-z0-9_]+):\s*(.*)$", raw)
        if not match:
            continue
        indent, key, value = len(match[1]), match[2], match[3]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        dotted = ".".join([k for _, k in stack] + [key])
        if value == "" or value.startswith("#"):
            stack.append((indent, key))
            if comment:
                rows.append((dotted, "", " ".join(comment)))
        else:
            rows.append((dotted, value, " ".join(comment)))
        comment = []
    return rows


def helm_page() -> str:
    rows = helm_values(VALUES.read_text())
    described: set[str] = {key for key, _, note in rows if note}
    lines = []
    for key, default, note in rows:
        if not note and not any(key.startswith(parent + ".") for parent in described):
            raise DescriptionMissingError(
                f"Helm value {key} has no comment: describe it above the key in {VALUES}"
            )
        lines.append(
            f"| `{key}` | `{default}` | {note} |" if default else f"| `{key}` | | {note} |"
        )
    document = yaml.safe_load(VALUES.read_text())
    assert isinstance(document, dict)
    return (
        "# Helm values\n\n"
        "Generated from the comments in `charts/plimsoll/values.yaml`; "
        "`values.schema.json` checks every key, so a misspelt setting fails "
        "`helm install`. A value without a comment is described by its section.\n\n"
        "| value | default | what it does |\n| --- | --- | --- |\n" + "\n".join(lines) + "\n"
    )


PAGES = {
    "reference/capacitytest.md": capacitytest_page,
    "reference/status.md": status_page,
    "reference/cli.md": cli_page,
    "reference/metrics.md": metrics_page,
    "reference/helm-values.md": helm_page,
}

if __name__ in {"__main__", "<run_path>"}:
    for page, render in PAGES.items():
        with mkdocs_gen_files.open(page, "w") as out:
            out.write(render())
