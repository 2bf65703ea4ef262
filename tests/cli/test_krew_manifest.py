"""plugins/plimsoll.yaml is a plugin manifest krew accepts, for the command that exists.

krew refuses a manifest that breaks its structural rules (its
internal/index/validation): the apiVersion and kind, a name that is the file's stem
and safe as a file name, a one-line short description, a `v`-prefixed semantic
version, and platforms that each have a uri, a 64-hex sha256, a bin, file
operations with `from` and `to`, and a selector on `os`/`arch` only. Those rules are
checked here, then what makes the manifest true of this tree: the archive
scripts/krew-archive builds has the manifest's sum, its launcher is the `bin`,
and it runs the package's `kubectl plimsoll` with its four commands.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.cli.kubectl import app
from tests.localrun import ROOT

MANIFEST = ROOT / "plugins" / "plimsoll.yaml"
SEMVER = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
)
SAFE_NAME = re.compile(r"^[\w-]+$")
COMMANDS = {"report", "rerun", "compare", "logs", "wait"}


def _manifest() -> dict[str, Any]:
    return dict(yaml.safe_load(MANIFEST.read_text()))


def _project() -> dict[str, Any]:
    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"])


def test_the_manifest_keeps_krews_structural_rules() -> None:
    plugin = _manifest()
    assert plugin["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert plugin["kind"] == "Plugin"
    name = plugin["metadata"]["name"]
    assert name == MANIFEST.stem
    assert SAFE_NAME.match(name)
    spec = plugin["spec"]
    assert spec["shortDescription"]
    assert "\n" not in spec["shortDescription"]
    assert "\r" not in spec["shortDescription"]
    assert SEMVER.match(spec["version"]), spec["version"]
    assert spec["platforms"]
    selectors = []
    for platform in spec["platforms"]:
        assert platform["uri"]
        assert re.fullmatch(r"[a-f0-9]{64}", platform["sha256"])
        assert platform["bin"]
        files = platform.get("files")
        assert files is None or files
        for operation in files or []:
            assert operation["from"]
            assert operation["to"]
        selector = platform["selector"]
        labels = selector.get("matchLabels")
        expressions = selector.get("matchExpressions")
        assert labels or expressions, "krew refuses an empty selector"
        keys = set(labels or {}) | {e["key"] for e in expressions or []}
        assert keys <= {"os", "arch"}
        selectors.append(tuple(sorted((labels or {}).items())))
    assert len(set(selectors)) == len(selectors)  # one entry per platform


def test_it_names_the_command_the_package_installs() -> None:
    spec = _manifest()["spec"]
    scripts = _project()["scripts"]
    for platform in spec["platforms"]:
        # kubectl runs `kubectl NAME` as the program `kubectl-NAME` krew links on the PATH
        assert platform["bin"] == f"kubectl-{_manifest()['metadata']['name']}"
        assert scripts[platform["bin"]] == "plimsoll.cli.kubectl:main"
        assert [f["from"] for f in platform["files"]] == [platform["bin"]]
    assert spec["version"] == f"v{_project()['version']}"
    registered = {
        c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands
    }
    assert registered == COMMANDS
    for command in COMMANDS:
        assert f"`{command} " in spec["description"]


def _unpacked(tmp_path: Path) -> Path:
    built = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "krew-archive"), "--check", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr  # the manifest's sha256 and version are current
    uris = {p["uri"] for p in _manifest()["spec"]["platforms"]}
    archives = [tmp_path / Path(uri).name for uri in uris]
    assert len(archives) == 1
    assert archives[0].exists()
    launcher = tmp_path / "bin" / "kubectl-plimsoll"
    launcher.parent.mkdir()
    with tarfile.open(archives[0]) as tar:
        assert tar.getnames() == ["kubectl-plimsoll"]
        # The one member, read by hand: extractall's `filter` is missing from Debian's
        # python3.11 (3.11.2; it came in 3.11.4), and a plain extractall trusts the paths.
        member = tar.getmember("kubectl-plimsoll")
        assert member.isfile()
        content = tar.extractfile(member)
        assert content is not None
        launcher.write_bytes(content.read())
        launcher.chmod(member.mode & 0o755)
    assert launcher.stat().st_mode & 0o111
    return launcher


def test_the_archived_launcher_runs_the_plugin(tmp_path: Path) -> None:
    launcher = _unpacked(tmp_path)
    shown = subprocess.run(
        [str(launcher), "--help"],
        env={"PATH": "/usr/bin:/bin", "PLIMSOLL_PYTHON": sys.executable, "COLUMNS": "120"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "Usage: kubectl-plimsoll" in shown.stdout
    commands = shown.stdout.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"^  (\w+)\s{2,}", commands, re.M))
    assert listed == COMMANDS


@pytest.mark.skipif(sys.platform != "linux", reason="the launcher is a POSIX shell script")
def test_without_the_package_the_launcher_says_what_to_install(tmp_path: Path) -> None:
    launcher = _unpacked(tmp_path)
    bare = tmp_path / "bare-python"  # the same interpreter without site-packages
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    bare.chmod(0o755)
    refused = subprocess.run(
        [str(launcher), "report", "x"],
        env={"PATH": "/usr/bin:/bin", "PLIMSOLL_PYTHON": str(bare)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode == 1
    assert "is not installed for" in refused.stderr
    assert '-m pip install ".[operator]"' in refused.stderr
    assert "from a clone of the Plimsoll repository" in refused.stderr
