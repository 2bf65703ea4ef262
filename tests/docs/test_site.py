"""The docs site builds, and what it shows is true of the code.

- `mkdocs build --strict` passes: no broken link or anchor, no page missing from the
  nav, no field or Helm value without a description (scripts/docs_reference.py);
- every CapacityTest snippet in the docs validates as `plimsoll validate` would;
- every `plimsoll` command shown exists, with every option it is shown with.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from plimsoll.api.resource import SpecError
from plimsoll.cli.app import app
from plimsoll.cli.spec_file import read_capacity_tests
from tests.localrun import ROOT

DOCS = ROOT / "docs"
PAGES = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# A shell line that runs the CLI: `plimsoll ...`, `$ plimsoll ...`, `.venv/bin/plimsoll ...`.
COMMAND = re.compile(r"^\s*(?:\$\s+)?(?:\.venv/bin/|\$\(BIN\)/)?plimsoll\s+(.*)$")


def _blocks(kind: set[str]) -> list[tuple[Path, str]]:
    found = []
    for page in PAGES:
        for match in FENCE.finditer(page.read_text()):
            if match[1] in kind:
                found.append((page, match[2]))
    return found


def _capacity_tests() -> list[tuple[str, str]]:
    snippets = []
    for page, text in _blocks({"yaml"}):
        if re.search(r"^kind:\s*CapacityTest\s*$", text, re.M):
            snippets.append((page.relative_to(ROOT).as_posix(), text))
    return snippets


def _shown_commands() -> list[tuple[str, str]]:
    shown = []
    for page in PAGES:
        in_code = False
        for line in page.read_text().splitlines():
            if line.startswith("```"):
                in_code = not in_code
            code = in_code or line.startswith("    ")
            match = COMMAND.match(line)
            if code and match:
                shown.append((page.relative_to(ROOT).as_posix(), match[1].split("#")[0]))
    return shown


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    front = (tmp_path / "index.html").read_text()
    assert "Plimsoll" in front
    fields = (tmp_path / "reference" / "capacitytest.html").read_text()
    assert "passWhen" in fields
    assert "warmUp" in fields
    # Opened from file://: links name the page's file, and search needs no fetch.
    assert 'href="how-to/own-service.html"' in front
    assert not re.search(r'href="[^":#]+/"', front), "a directory link lists files under file://"
    assert (tmp_path / "search" / "search_index.js").exists()


def test_the_docs_show_capacity_tests() -> None:
    # Both tutorials show a whole CapacityTest; the finder must see them, or the
    # validation test below would be an empty parametrization.
    assert len(_capacity_tests()) >= 2


@pytest.mark.parametrize(("page", "text"), _capacity_tests(), ids=lambda v: str(v)[:40])
def test_every_capacity_test_snippet_validates(page: str, text: str, tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.yaml"
    snippet.write_text(text)
    try:
        tests = read_capacity_tests(snippet)
    except SpecError as exc:
        pytest.fail(f"{page}: a snippet does not validate:\n" + "\n".join(exc.problems))
    assert tests


def _options_of(command: Any) -> set[str]:
    names = {"--help"}
    for param in command.params:
        names.update(o for o in getattr(param, "opts", []) if o.startswith("-"))
        names.update(o for o in getattr(param, "secondary_opts", []) if o.startswith("-"))
    return names


def test_the_docs_show_commands() -> None:
    assert len(_shown_commands()) >= 10


@pytest.mark.parametrize(("page", "line"), _shown_commands(), ids=lambda v: str(v)[:50])
def test_every_command_shown_exists(page: str, line: str) -> None:
    root = typer.main.get_command(app)
    words = shlex.split(line.replace("\\", " "), posix=True) if line.strip() else []
    if not words or words[0].startswith("-"):
        assert not words or set(words) <= _options_of(root), f"{page}: plimsoll {line}"
        return
    subcommands: dict[str, Any] = getattr(root, "commands", {})
    assert words[0] in subcommands, f"{page}: `plimsoll {words[0]}` is no command"
    known = _options_of(subcommands[words[0]])
    for word in words[1:]:
        option = word.split("=", 1)[0]
        if option.startswith("--"):
            assert option in known, f"{page}: `plimsoll {words[0]}` has no option {option}"
