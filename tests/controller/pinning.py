"""The test kubelets' cgroups: a pod with CPU and memory limits runs inside them.

A real kubelet puts each container in a cgroup sized by its limits, and
cAdvisor reads CPU time, CFS throttling, the working set and OOM kills from
there; that is what lets the runner name what limited the target. The test
kubelets (`real_kubelet.py`, and `kubelet.py` on the emulated cluster) do the
same with the local platform's own code (`plimsoll.platforms.local.pinning`):
one group per container with `limits.cpu` and `limits.memory` (the operator
writes requests == limits), joined by a shell before it execs the command so
every byte is charged from the start, and read back through `CadvisorExporter`
by its cgroup paths. Where cgroups cannot be
written, the container runs unpinned and `problem` says why, so a test that
needs the figures fails with that reason instead of a bare `unknown`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from plimsoll.api.units import parse_cpu, parse_memory
from plimsoll.metrics.cgroup import CgroupPaths
from plimsoll.platforms.local import pinning as cgroups

# Joins each cgroup named in $PLIMSOLL_CGROUP_PROCS, then becomes the container's command.
_JOIN = (
    'IFS=:; for f in $PLIMSOLL_CGROUP_PROCS; do echo $$ > "$f" || exit 97; done; '
    'unset PLIMSOLL_CGROUP_PROCS; exec "$@"'
)


@dataclass
class NodeCgroups:
    node: str = field(default_factory=lambda: f"fake-node-{uuid.uuid4().hex[:8]}")
    groups: dict[tuple[str, str], cgroups.PinnedGroup] = field(default_factory=dict)
    problem: str | None = None  # why a container that asked for limits runs unpinned

    def pin(self, key: tuple[str, str], container: dict[str, Any]) -> cgroups.PinnedGroup | None:
        """The container's cgroup, sized by its limits; None when it has none (or cannot)."""
        limits = (container.get("resources") or {}).get("limits") or {}
        if "cpu" not in limits or "memory" not in limits:
            return None
        role = f"{key[0]}.{key[1]}.{uuid.uuid4().hex[:6]}"  # a restart gets a fresh group
        try:
            group = cgroups.create_group(
                cgroups.discover(),
                self.node,
                role,
                parse_cpu(limits["cpu"]),
                parse_memory(limits["memory"]),
            )
        except cgroups.CgroupsUnavailableError as exc:
            self.problem = f"{key[0]}/{key[1]} runs unpinned: {exc}"
            return None
        self.groups[key] = group
        return group

    @staticmethod
    def command(argv: list[str], env: dict[str, str], group: cgroups.PinnedGroup) -> list[str]:
        env["PLIMSOLL_CGROUP_PROCS"] = ":".join(str(p) for p in group.procs_files)
        return ["/bin/sh", "-c", _JOIN, "fake-kubelet-pin", *argv]

    @staticmethod
    def paths(group: cgroups.PinnedGroup) -> CgroupPaths:
        version: Literal[1, 2] = 2 if group.version == 2 else 1
        cpuacct = None if group.cpuacct_dir == group.cpu_dir else group.cpuacct_dir
        return CgroupPaths(version, group.cpu_dir, group.memory_dir, cpuacct)

    def release(self, key: tuple[str, str]) -> list[str]:
        """Remove a stopped container's cgroup; problems as text (processes left, ...)."""
        group = self.groups.pop(key, None)
        return cgroups.remove_group(group) if group is not None else []
