"""No module of the operator's package passes 500 lines, and no function 60 (issue 53):
past that a module holds more than one concept, or a function more than one step, and
the next reader cannot keep it in their head. Split by concept, as the Kubernetes
platform (admission, endpoints, run_metrics, run_pods, started) and the spec
(search_spec, pass_when, measuring, spec_checks) were.

A command's parameters are its declared options (each a typer `Annotated` with its help
text, one per flag: `plimsoll size` has 33), so for a command only its body is held to 60
lines; everywhere else the whole function is."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.localrun import ROOT

LIMIT = 500
FUNCTION_LIMIT = 60
PACKAGE = ROOT / "operator" / "plimsoll"


def _is_command(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A CLI command: every parameter declared with `Annotated` (typer's options)."""
    params = [*function.args.args, *function.args.kwonlyargs]
    return bool(params) and all(
        isinstance(p.annotation, ast.Subscript)
        and isinstance(p.annotation.value, ast.Name)
        and p.annotation.value.id == "Annotated"
        for p in params
    )


def function_lengths(path: Path, root: Path = ROOT) -> dict[str, int]:
    """Each function's length in lines (a command's body only), by qualified name."""
    lengths = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0].lineno if _is_command(node) else node.lineno
            assert node.end_lineno is not None
            lengths[f"{path.relative_to(root)}:{node.name}"] = node.end_lineno - first + 1
    return lengths


def test_no_module_passes_500_lines() -> None:
    package = ROOT / "operator" / "plimsoll"
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for path in package.rglob("*.py")
    }
    assert len(sizes) > 200, "the package was not found where it should be"
    over = {path: lines for path, lines in sizes.items() if lines > LIMIT}
    assert over == {}, f"split these by concept: {over}"


def test_no_function_passes_60_lines() -> None:
    lengths: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        lengths.update(function_lengths(path))
    assert len(lengths) > 1000, "the package's functions were not found"
    over = {name: lines for name, lines in lengths.items() if lines > FUNCTION_LIMIT}
    assert over == {}, f"split these into steps: {over}"


def test_a_long_function_is_found(tmp_path: Path) -> None:
    """The measure itself: a 61-line function is over, a command's long option list is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    options = "\n".join(f"    o{i}: Annotated[int, typer.Option()] = {i}," for i in range(40))
    module = tmp_path / "probe.py"
    module.write_text(f"def long():\n{body}\n\n\ndef command(\n{options}\n) -> None:\n    pass\n")
    lengths = function_lengths(module, tmp_path)
    assert lengths == {
        "probe.py:long": 61,
        "probe.py:command": 1,
    }
