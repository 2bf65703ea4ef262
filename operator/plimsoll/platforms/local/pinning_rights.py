"""Whether this process may pin the target, and what to tell a user who may not.

`plimsoll run` asks `check` before it starts anything: pinning that fails halfway
through a run would measure an unpinned target and call it the shape's ceiling.
Without the rights, the run refuses with `refusal`'s words unless the user passed
`--unpinned`. Where systemd's user manager can delegate a cgroup
(`systemd-run --user --scope -p Delegate=yes`), `delegated_root` finds the cgroup
the run was started in and makes it the hierarchy to pin in, so a normal user
needs neither root nor PLIMSOLL_CGROUP_ROOT; `systemd_delegation` says whether
that route exists here, and the run re-executes itself through it once
(`DELEGATED_ENV` stops a second time).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

from plimsoll.api.units import format_cpu
from plimsoll.platforms.local import pinning

ROOT_ENV = "PLIMSOLL_CGROUP_ROOT"
DELEGATED_ENV = "PLIMSOLL_DELEGATED_SCOPE"  # set when the run re-executed itself in a scope
RUNNER_LEAF = "runner"  # v2 forbids processes beside enabled controllers: the runner moves here


def check(root: Path | None) -> str | None:
    """None when a group with limits can be made (and removed) under `root` (None: the
    mounted hierarchy), else why not."""
    try:
        hierarchy = pinning.discover(root)
        group = pinning.create_group(hierarchy, f"rights-{os.getpid()}", "check", 0.1, 64 << 20)
    except pinning.CgroupsUnavailableError as exc:
        return str(exc)
    pinning.remove_group(group)
    return None


def refusal(cores: float, memory_bytes: int, problem: str, command: str) -> str:
    """The refusal `plimsoll run` prints: the shape, the ways out, and the cause."""
    shape = f"{_cpu(cores)} / {_mib(memory_bytes)}"
    return (
        f"the target cannot be pinned to {shape}: run as root, or delegate a cgroup: "
        f"`systemd-run --user --scope -p Delegate=yes -- {command}` (systemd with a user "
        f"manager), or set {ROOT_ENV} to a cgroup v2 directory you own whose "
        "cgroup.controllers lists cpu and memory; or pass --unpinned to run it without "
        f"limits, and every report says so ({problem})"
    )


def systemd_delegation() -> bool:
    """Whether `systemd-run --user --scope` can start a scope here: the command exists and
    a user manager answers (not as root: root needs no delegation)."""
    if os.geteuid() == 0 or shutil.which("systemd-run") is None:
        return False
    try:
        answered = subprocess.run(
            ["systemctl", "--user", "is-system-running"],
            capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    # "degraded" is a running manager with a failed unit: it still starts scopes.
    return answered.stdout.strip() in {"running", "degraded"}


def delegation_argv(argv: list[str]) -> list[str]:
    """`argv` run again inside a delegated scope of the user's systemd."""
    return ["systemd-run", "--user", "--scope", "--quiet", "-p", "Delegate=yes", "--", *argv]


def delegated_root(
    proc_cgroup: Path = Path("/proc/self/cgroup"),
    mounts: Path = Path("/proc/self/mounts"),
    pid: int | None = None,
) -> Path | None:
    """The cgroup v2 directory this process was started in, made ready to pin children
    in, when it was delegated to us (we may write it, and it has cpu and memory); None
    otherwise. The process moves into a leaf of it first, since v2 lets a cgroup enable
    controllers for its children only while it holds no process itself."""
    own = _own_v2_path(proc_cgroup)
    mount = _v2_mount(mounts)
    if own is None or mount is None:
        return None
    directory = mount / own.lstrip("/")
    controllers = set(_read(directory / "cgroup.controllers").split())
    if not {"cpu", "memory"} <= controllers or not os.access(directory, os.W_OK):
        return None
    leaf = directory / RUNNER_LEAF
    try:
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(pid if pid is not None else os.getpid()))
    except OSError:
        return None
    return directory


def _own_v2_path(proc_cgroup: Path) -> str | None:
    for line in _read(proc_cgroup).splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            return path
    return None


def _v2_mount(mounts: Path) -> Path | None:
    for line in _read(mounts).splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "cgroup2":
            return Path(parts[1])
    return None


def _read(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text()
    return ""


def _cpu(cores: float) -> str:
    return f"{format_cpu(cores)} CPU" if cores >= 1 else f"{cores:g} CPU"


def _mib(count: int) -> str:
    if count >= 1 << 30 and count % (1 << 30) == 0:
        return f"{count >> 30} GiB"
    return f"{count / (1 << 20):g} MiB"
