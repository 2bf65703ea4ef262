"""`plimsoll run` never runs an unpinned target silently (issue 55).

Without the rights to pin (simulated by PLIMSOLL_CGROUP_ROOT naming a directory with
no cgroup filesystem, as a normal user's would be read-only), the run refuses before
it starts anything; with `--unpinned` it runs, and every report says so in its first
line: the ceiling sentence printed and saved, and report.md's heading.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.localrun import marked_processes, plimsoll

pytestmark = pytest.mark.usefixtures("mark")

SPEC = {
    "apiVersion": "plimsoll.dev/v1alpha1",
    "kind": "CapacityTest",
    "metadata": {"name": "unpinned"},
    "spec": {
        "target": {
            "command": ["python", "examples/targets/cpu_bound.py"],
            "env": {"WORK_MS": "5"},
            "resources": {"cpu": "0.5", "memory": "96Mi"},
        },
        "workload": {"model": "rate", "mix": [{"name": "work", "path": "/work"}]},
        "trial": {"duration": "1s", "warmUp": "0.3s"},
        "search": {"strategy": "steps", "levels": [10], "repeats": 0},
        "passWhen": {"minAchieved": "90%", "latency": [{"quantile": "p99", "below": "500ms"}]},
        "generators": {"replicas": 1, "processes": 1},
    },
}


@pytest.fixture
def no_rights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PLIMSOLL_CGROUP_ROOT", str(tmp_path / "read-only-cgroups"))
    spec = tmp_path / "unpinned.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    return spec


def test_without_the_rights_the_run_refuses_before_starting_anything(
    no_rights: Path, tmp_path: Path, mark: str
) -> None:
    result = plimsoll("run", str(no_rights), "--out", str(tmp_path / "out"), timeout=60)
    assert result.returncode == 1
    assert (
        "the target cannot be pinned to 0.5 CPU / 96 MiB: run as root, or delegate a cgroup: "
        in result.stderr
    )
    assert "--unpinned" in result.stderr
    assert not (tmp_path / "out").exists()
    assert marked_processes(mark) == []


@pytest.mark.slow
def test_with_unpinned_every_report_says_so_first(
    no_rights: Path, tmp_path: Path, mark: str
) -> None:
    out = tmp_path / "out"
    result = plimsoll("run", str(no_rights), "--unpinned", "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    summary = [line for line in result.stdout.splitlines() if line.strip()]
    assert summary[0].startswith("0.5 CPU / 96 MiB (unpinned) ")
    saved = json.loads((out / "report.json").read_text())
    assert saved["pinned"] is False
    assert saved["summary"][0].startswith("0.5 CPU / 96 MiB (unpinned) ")
    first = (out / "report.md").read_text().splitlines()[0]
    assert first.startswith("# Capacity report: unpinned (UNPINNED: ")
    assert marked_processes(mark) == []
