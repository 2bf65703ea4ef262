"""Every command's `--help` as a user sees it at 80 columns: nothing cut, examples at the end.

Rendered through typer's own test runner with COLUMNS=80 for both apps (`plimsoll`
and the `kubectl plimsoll` plugin), every command and the apps themselves: no line is
longer than 80, every flag's full name is there, and the help ends with two or three
examples of the command itself. The commands a pipeline waits on list the exit codes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from plimsoll.cli.app import app as plimsoll_app
from plimsoll.cli.kubectl import app as kubectl_app

runner = CliRunner()
APPS = {"plimsoll": plimsoll_app, "kubectl plimsoll": kubectl_app}


def _commands() -> list[tuple[str, list[str]]]:
    found = []
    for prog, typer_app in APPS.items():
        root = typer.main.get_command(typer_app)
        found.append((prog, []))
        found += [(prog, [name]) for name in getattr(root, "commands", {})]
    return found


def _command(prog: str, path: list[str]) -> Any:
    command = typer.main.get_command(APPS[prog])
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


def _help(prog: str, path: list[str]) -> str:
    shown = runner.invoke(APPS[prog], [*path, "--help"], env={"COLUMNS": "80"}, color=False)
    assert shown.exit_code == 0, shown.output
    return shown.stdout


def test_every_command_is_covered() -> None:
    names = {" ".join([prog, *path]) for prog, path in _commands()}
    assert {"plimsoll run", "plimsoll compare", "kubectl plimsoll wait"} <= names
    assert len(names) >= 14


@pytest.mark.parametrize(("prog", "path"), _commands(), ids=lambda v: str(v))
def test_help_fits_80_columns_and_cuts_no_flag(prog: str, path: list[str]) -> None:
    text = _help(prog, path)
    too_long = [line for line in text.splitlines() if len(line) > 80]
    assert not too_long, "\n".join(too_long)
    assert "…" not in text
    for param in _command(prog, path).params:
        for name in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
            if name.startswith("-"):
                assert re.search(rf"(^|[\s,/]){re.escape(name)}([\s,=]|$)", text, re.M), name


@pytest.mark.parametrize(("prog", "path"), _commands(), ids=lambda v: str(v))
def test_help_ends_with_two_or_three_examples_of_the_command(prog: str, path: list[str]) -> None:
    text = _help(prog, path).rstrip("\n")
    head, _, tail = text.rpartition("\n  Examples:\n")
    assert head, f"no examples at the end of {prog} {' '.join(path)} --help"
    examples = tail.splitlines()
    assert 2 <= len(examples) <= 3, examples
    for example in examples:
        assert example.startswith("    "), example
        command = example.strip().split(" && ")[0]
        if path:
            assert f"{prog} {path[0]}" in example, example
        else:
            assert command.startswith(prog), example


@pytest.mark.parametrize(
    ("prog", "path"),
    [("plimsoll", ["run"]), ("plimsoll", ["compare"]), ("kubectl plimsoll", ["wait"])],
)
def test_the_commands_a_pipeline_waits_on_list_their_exit_codes(prog: str, path: list[str]) -> None:
    text = _help(prog, path)
    for line in (
        "0   answered, and within the bar",
        "1   could not complete",
        "2   invalid spec or command line",
        "99  answered, but the bar, the regression gate or the proof says no",
    ):
        assert line in text
