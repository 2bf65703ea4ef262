"""The `plimsoll` and `kubectl plimsoll` commands the docs and the chart's notes show parse.

Each command line (a shell block's line, or an indented one in NOTES.txt, with
placeholders such as `<name>` filled in) is run against the CLI with `--help` added:
click checks every option before it answers, so a documented option the CLI does not
have fails here ("No such option: -n", the drift issue 55 found in NOTES.txt).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from plimsoll.cli import kubectl
from plimsoll.cli.app import app
from tests.charts.helm import render

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    "docs/how-to/install.md",
    "docs/how-to/own-service.md",
    "docs/how-to/kubectl.md",
    "docs/tutorials/local.md",
]
COMMAND = re.compile(r"^\s*(?:\$ )?((?:\.venv/bin/)?(?:kubectl )?plimsoll(?:\s.*)?)$")


def _commands(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        match = COMMAND.match(line)
        if match:
            words = match.group(1).split("#", 1)[0].strip()
            found.append(re.sub(r"<[^>]+>", "x", words))
    return found


def _sources() -> list[tuple[str, str]]:
    sources = [(path, (ROOT / path).read_text()) for path in DOCS]
    for mode in ({}, {"watch": {"scope": "namespaced", "namespaces": ["team-a"]}}):
        sources.append(("NOTES.txt", render(mode)["plimsoll/templates/NOTES.txt"]))
    return sources


CASES = [(where, command) for where, text in _sources() for command in _commands(text)]


def test_the_scan_finds_the_notes_report_command() -> None:
    assert ("NOTES.txt", "kubectl plimsoll report x -n team-a") in CASES


@pytest.mark.parametrize(("where", "command"), CASES)
def test_each_documented_command_parses(where: str, command: str) -> None:
    words = shlex.split(command)
    words[0] = Path(words[0]).name
    cli: typer.Typer = kubectl.app if words[0] == "kubectl" else app
    args = words[2:] if words[0] == "kubectl" else words[1:]
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0, f"{where}: {command}\n{result.output}"
