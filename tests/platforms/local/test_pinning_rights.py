"""Whether a run may pin its target, and the words of a refusal (`pinning_rights`).

The seam for "no rights" is a cgroup root that cannot be written (a path with no
cgroup filesystem under it), the same seam PLIMSOLL_CGROUP_ROOT gives a user; the
delegated scope is a directory laid out as systemd leaves one.
"""

from __future__ import annotations

import os
from pathlib import Path

from plimsoll.platforms.local import pinning_rights


def test_a_root_that_cannot_be_written_is_no_right_to_pin(tmp_path: Path) -> None:
    problem = pinning_rights.check(tmp_path / "no-cgroups")
    assert problem is not None
    assert "cannot create" in problem


def test_the_refusal_names_the_shape_and_every_way_out() -> None:
    text = pinning_rights.refusal(
        0.5, 96 << 20, "cannot create /x: Permission denied", "plimsoll run q.yaml"
    )
    assert text.startswith(
        "the target cannot be pinned to 0.5 CPU / 96 MiB: run as root, or delegate a cgroup: "
    )
    assert "`systemd-run --user --scope -p Delegate=yes -- plimsoll run q.yaml`" in text
    assert "PLIMSOLL_CGROUP_ROOT" in text
    assert "--unpinned" in text
    assert text.endswith("(cannot create /x: Permission denied)")
    assert "2 CPU / 1 GiB" in pinning_rights.refusal(2, 1 << 30, "x", "plimsoll run f")


def _scope(tmp_path: Path, controllers: str) -> tuple[Path, Path, Path]:
    mount = tmp_path / "cgroup"
    scope = mount / "user.slice" / "user-1000.slice" / "run-u7.scope"
    scope.mkdir(parents=True)
    (scope / "cgroup.controllers").write_text(controllers + "\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text("0::/user.slice/user-1000.slice/run-u7.scope\n")
    mounts = tmp_path / "mounts"
    mounts.write_text(f"sysfs /sys sysfs rw 0 0\ncgroup2 {mount} cgroup2 rw,nsdelegate 0 0\n")
    return scope, proc, mounts


def test_a_delegated_scope_is_the_root_and_the_runner_moves_into_a_leaf(tmp_path: Path) -> None:
    scope, proc, mounts = _scope(tmp_path, "cpu io memory pids")
    assert pinning_rights.delegated_root(proc, mounts, pid=4242) == scope
    assert (scope / "runner" / "cgroup.procs").read_text() == "4242"


def test_a_scope_without_the_cpu_controller_is_not_used(tmp_path: Path) -> None:
    scope, proc, mounts = _scope(tmp_path, "memory pids")
    assert pinning_rights.delegated_root(proc, mounts, pid=4242) is None
    assert not (scope / "runner").exists()


def test_no_v2_hierarchy_no_delegated_root(tmp_path: Path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/x\n1:cpu:/\n")
    assert pinning_rights.delegated_root(proc, tmp_path / "none", pid=os.getpid()) is None


def test_the_scope_runs_the_same_command_again() -> None:
    argv = pinning_rights.delegation_argv(["python", "-c", "main()", "run", "q.yaml"])
    assert argv[:6] == ["systemd-run", "--user", "--scope", "--quiet", "-p", "Delegate=yes"]
    assert argv[6:] == ["--", "python", "-c", "main()", "run", "q.yaml"]
