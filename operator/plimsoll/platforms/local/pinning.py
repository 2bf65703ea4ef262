"""Pinning local processes to a pod shape with real cgroups (v2, or v1 cpu + memory).

The local platform calls `create_group` for the target (and for services that
name a shape): it makes `plimsoll/<run>/<role>` under each controller's
hierarchy, writes the CPU quota and the memory limit (requests == limits, as
Kubernetes' Guaranteed QoS), and hands back the directories the metrics reader
samples and the `cgroup.procs` files a process joins before it execs. The
unified hierarchy is used where it has both the cpu and memory controllers;
otherwise the v1 ones (which may be mounted separately, as cpu and cpuacct are
on some hosts). Where neither can be written, `CgroupsUnavailable` says why
and the platform runs unpinned, loudly.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

CPU_PERIOD_US = 100_000


class CgroupsUnavailableError(RuntimeError):
    """Pinning is not possible here; the message says why (no root, read-only, absent)."""


@dataclass(frozen=True)
class Hierarchy:
    """Where the controllers are mounted: one v2 root, or one directory per v1 controller."""

    version: int
    cpu: Path
    cpuacct: Path
    memory: Path


@dataclass
class PinnedGroup:
    role: str
    version: int
    cpu_dir: Path
    cpuacct_dir: Path
    memory_dir: Path
    cpu_cores: float
    memory_bytes: int
    created: list[Path] = field(default_factory=list)  # deepest last, removed in reverse

    @property
    def procs_files(self) -> list[Path]:
        dirs = dict.fromkeys([self.cpu_dir, self.cpuacct_dir, self.memory_dir])
        return [d / "cgroup.procs" for d in dirs]


def _mounts(mounts_file: Path) -> list[tuple[Path, str, set[str]]]:
    entries = []
    with contextlib.suppress(OSError):
        for line in mounts_file.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                entries.append((Path(parts[1]), parts[2], set(parts[3].split(","))))
    return entries


def discover(root: Path | None = None, mounts_file: Path = Path("/proc/self/mounts")) -> Hierarchy:
    """The hierarchy to pin in. `root` overrides discovery (tests, unusual hosts): a v2
    root if it holds `cgroup.controllers`, else a v1 root with cpu/cpuacct/memory dirs."""
    if root is not None:
        if (root / "cgroup.controllers").exists():
            return Hierarchy(2, root, root, root)
        return Hierarchy(1, root / "cpu", root / "cpuacct", root / "memory")
    v1: dict[str, Path] = {}
    v2: Path | None = None
    for mount, kind, options in _mounts(mounts_file):
        if kind == "cgroup2":
            v2 = mount
            continue
        for controller in ("cpu", "cpuacct", "memory"):
            if controller in options:
                v1.setdefault(controller, mount)
    if v2 is not None:
        controllers = _read(v2 / "cgroup.controllers").split()
        if {"cpu", "memory"} <= set(controllers):
            return Hierarchy(2, v2, v2, v2)
    if {"cpu", "memory"} <= v1.keys():
        return Hierarchy(1, v1["cpu"], v1.get("cpuacct", v1["cpu"]), v1["memory"])
    raise CgroupsUnavailableError(
        "no cgroup hierarchy with both the cpu and memory controllers is mounted"
    )


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise CgroupsUnavailableError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _make(base: Path, parts: list[str], created: list[Path], v2_enable: bool) -> Path:
    path = base
    for part in parts:
        if v2_enable:
            # A v2 child gets cpu/memory files only if its parent delegates them.
            _write(path / "cgroup.subtree_control", "+cpu +memory")
        path = path / part
        if not path.exists():
            try:
                path.mkdir()
            except OSError as exc:
                raise CgroupsUnavailableError(
                    f"cannot create {path}: {exc.strerror or exc}"
                ) from exc
            created.append(path)
    return path


def create_group(
    hierarchy: Hierarchy, run_id: str, role: str, cpu_cores: float, memory_bytes: int
) -> PinnedGroup:
    """Make the role's cgroups and write its limits; undone by `remove_group`."""
    parts = ["plimsoll", run_id, role]
    created: list[Path] = []
    try:
        if hierarchy.version == 2:
            directory = _make(hierarchy.cpu, parts, created, v2_enable=True)
            quota = max(int(cpu_cores * CPU_PERIOD_US), 1000)
            _write(directory / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            _write(directory / "memory.max", str(memory_bytes))
            if (directory / "memory.swap.max").exists():
                _write(directory / "memory.swap.max", "0")  # a limit swap cannot dodge
            group = PinnedGroup(
                role, 2, directory, directory, directory, cpu_cores, memory_bytes, created
            )
        else:
            cpu = _make(hierarchy.cpu, parts, created, v2_enable=False)
            cpuacct = (
                cpu
                if hierarchy.cpuacct == hierarchy.cpu
                else _make(hierarchy.cpuacct, parts, created, v2_enable=False)
            )
            memory = _make(hierarchy.memory, parts, created, v2_enable=False)
            _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(max(int(cpu_cores * CPU_PERIOD_US), 1000)))
            _write(memory / "memory.limit_in_bytes", str(memory_bytes))
            group = PinnedGroup(role, 1, cpu, cpuacct, memory, cpu_cores, memory_bytes, created)
    except CgroupsUnavailableError:
        _remove_dirs(created)
        raise
    return group


def _remove_dirs(created: list[Path]) -> None:
    for path in reversed(created):
        with contextlib.suppress(OSError):
            path.rmdir()


def remove_group(group: PinnedGroup) -> list[str]:
    """Remove the group's directories (and the run's, once empty); problems as text."""
    problems: list[str] = []
    for procs in group.procs_files:
        leftover = _read(procs).split()
        if leftover:
            problems.append(f"{procs.parent} still holds processes {leftover}")
    for directory in dict.fromkeys([group.cpu_dir, group.cpuacct_dir, group.memory_dir]):
        # The role's directory, then the run's and plimsoll's if no other role holds them.
        for path in (directory, directory.parent, directory.parent.parent):
            with contextlib.suppress(OSError):
                path.rmdir()
        if directory.exists():
            problems.append(f"could not remove {directory}")
    return problems


def read_procs(directory: Path) -> list[str]:
    """The pids in one cgroup directory (its `cgroup.procs`), as written there."""
    return _read(directory / "cgroup.procs").split()


def remove_when_empty(directory: Path) -> None:
    """Remove a cgroup directory; the kernel refuses while a process is still in it."""
    with contextlib.suppress(OSError):
        directory.rmdir()
