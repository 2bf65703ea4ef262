"""Every `pip install` hint in the repository installs the project's own distribution.

`plimsoll` on the public Python index is an unrelated project, so a hint such as
`pip install "plimsoll[operator]"` installs a stranger's code. The distribution is
named in pyproject.toml (`plimsoll-capacity`), and nobody here publishes it to an
index either: a hint installs the project from a clone (`pip install -e '.[dev]'`) or
its wheel (`dist/plimsoll_capacity-*.whl`). Third-party tools and libraries (py-spy,
psycopg) may be named by their own names; anything named like this project may not.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from plimsoll import DISTRIBUTION

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# pip's options that take a value: the value is not a requirement.
VALUED = {"--cert", "--constraint", "-c", "-r", "--requirement", "--index-url", "-i",
          "--extra-index-url", "--find-links", "-f", "--target", "-t", "--prefix"}  # fmt: skip
HINT = re.compile(r"pip3? install\b([^`\n]*)")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def _hints() -> list[tuple[str, str]]:
    """(where, the words after `pip install`) for every hint in a tracked text file."""
    found = []
    for path in _files():
        if path == Path(__file__):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        text = text.replace("\\\n", " ")  # a shell line continued
        for match in HINT.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{path.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def _requirements(words: str) -> list[str]:
    """The requirements a hint names: its words that are neither options nor their values."""
    words = words.replace('\\"', '"')
    try:
        tokens = shlex.split(words, comments=False)
    except ValueError:  # an unbalanced quote: a hint cut by the line's end
        tokens = words.replace('"', " ").replace("'", " ").split()
    requirements, skip = [], False
    for token in tokens:
        token = token.strip("\"'`),;")
        if skip:
            skip = False
        elif token in VALUED:
            skip = True
        elif token in {"&&", "||", "|", ";"} or token.endswith(";"):
            break  # the next command
        elif token and not token.startswith("-"):
            requirements.append(token)
    return requirements


def problem(requirement: str) -> str | None:
    """Why a requirement is not the project's own distribution from here; None if fine."""
    if ".whl" in requirement:
        wheel = re.search(r"([^/\s()$]+)\.whl", requirement)
        stem = wheel.group(1) if wheel else ""
        if stem.startswith(DISTRIBUTION.replace("-", "_") + "-"):
            return None
        return f"{requirement}: a wheel that is not {DISTRIBUTION}'s"
    if requirement.startswith((".", "/", "~", "$", "file:", "git+")):
        return None  # this repository, a clone of it, or a path the user gives
    name = re.split(r"[\[<>=!~ ;@]", requirement, maxsplit=1)[0]
    if "plimsoll" in _normalise(name):
        return f"{requirement}: installs {name!r} from an index (install from a clone or the wheel)"
    return None


def test_the_distribution_is_named_apart_from_the_unrelated_plimsoll() -> None:
    assert PROJECT["name"] == DISTRIBUTION
    assert _normalise(DISTRIBUTION) != "plimsoll"


def test_the_extras_refer_to_the_project_by_its_own_name() -> None:
    # An extra that names `plimsoll[...]` would make pip fetch the unrelated project.
    for extra, requirements in PROJECT["optional-dependencies"].items():
        for requirement in requirements:
            name = re.split(r"[\[<>=!~ ;@]", requirement, maxsplit=1)[0]
            if "plimsoll" in _normalise(name):
                assert _normalise(name) == _normalise(DISTRIBUTION), (extra, requirement)


def test_every_install_hint_installs_the_project_from_here() -> None:
    hints = _hints()
    assert any("plugins/kubectl-plimsoll" in where for where, _ in hints)  # the scan sees them
    problems = [
        f"{where}: {why}"
        for where, words in hints
        for requirement in _requirements(words)
        if (why := problem(requirement)) is not None
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("requirement", "fine"),
    [
        ("plimsoll[operator]", False),
        ("plimsoll-capacity[operator]", False),  # ours, but from an index nobody here owns
        ("plimsoll_capacity", False),
        (".[operator]", True),
        ("$(ls /dist/plimsoll_capacity-*.whl)[generator,mock]", True),
        ("dist/plimsoll-0.1.0-py3-none-any.whl", False),
        ("py-spy", True),
        ("psycopg[binary]>=3.2", True),
    ],
)
def test_the_rule(requirement: str, fine: bool) -> None:
    assert (problem(requirement) is None) is fine
