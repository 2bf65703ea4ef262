"""The target on the local platform: its port, its shape, its restarts, its measuring.

`start_target` picks the port (a free one when the target reads it from its
env), pins the target with cgroups to the spec's shape, starts it and waits for
its readiness path, runs the setup commands (remembering their env for the
teardown commands `LocalPlatform.stop` runs), hands it to a `Restarter` that
restarts it if it dies between trials, and samples (and exports) its cgroup, or
its process group when it runs unpinned. `LocalPlatform.start` calls it after
the mock is up, since the target is told the mock's URL.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import Target
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.launcher import Launcher
from plimsoll.platforms.local.pieces import target_command
from plimsoll.platforms.local.processes import (
    ManagedProcess,
    cpu_list,
    free_port,
    port_is_free,
    wait_ready,
)
from plimsoll.platforms.local.restarter import Restarter
from plimsoll.shared.pod_names import target_replica


@dataclass(frozen=True)
class Replica:
    """One running replica of the target: measured as `role`, placed in `zone`."""

    index: int
    role: str
    zone: str | None
    url: str
    process: ManagedProcess
    restarter: Restarter
    pinned: bool  # in a cgroup with the shape's limits (False only under --unpinned)


def replica_role(index: int) -> str:
    """Replica 0 is the target the verdict reads; the others are measured beside it."""
    return target_replica(index)


def _replica_port(target: Target) -> int:
    """The port a replica listens on: a free one it learns from `target.portEnv`, else
    `target.port` when nothing listens there; PlatformError naming the fix otherwise."""
    port = target.port
    if target.replicas > 1 and target.port_env is None:
        raise PlatformError(
            f"target.replicas: {target.replicas} replicas cannot share port {port} on one "
            "machine: set target.portEnv so each replica gets a free port"
        )
    if target.port_env is not None:
        return free_port()  # the target learns it from its env: no clash with anything
    if not port_is_free(port):
        raise PlatformError(
            f"port {port} (target.port) is already in use on 127.0.0.1: stop whatever "
            "listens there, or set target.portEnv so Plimsoll can pick a free port"
        )
    return port


async def start_target(
    launcher: Launcher,
    spec: CapacityTestSpec,
    env: dict[str, str],
    mock_url: str,
    cpus: set[int] | None,
    index: int = 0,
    port: int | None = None,
) -> Replica:
    """Start replica `index` of the target with `env` (the base and the services'
    variables), with the restarter that keeps it running (already watching); on `port`
    when given (an autoscaled replica's, chosen before it started). The setup steps run
    once, after replica 0."""
    argv, own_env = target_command(spec)
    target = spec.target
    role = replica_role(index)
    zone = target.zones[index % len(target.zones)] if target.zones else None
    port = port if port is not None else _replica_port(target)
    env = {**env, **own_env, target.upstream_env: mock_url}
    if target.port_env is not None:
        env[target.port_env] = str(port)
    shape = target.resources
    group = launcher.pin(role, shape.cpu, shape.memory) if shape else None
    process = launcher.process(role, argv, env, group=group, cpus=cpus)
    url = f"http://127.0.0.1:{port}"
    ready_url = url + target.readiness_path

    async def launch() -> None:
        await process.start()
        await wait_ready(process, url=ready_url, within=target.startup_timeout)

    async def relaunch() -> None:
        if launcher.export is not None:
            launcher.export.restarted(role, process.returncode)
        await launch()
        if group is None:  # a new process group: measure the new one
            await launcher.rewatch_process_group(role, process.pid or 0)

    await launch()
    if index == 0:
        launcher.step_env = env  # the teardown steps run with what the setup steps saw
        await launcher.run_setup(target.setup, env)
    restarter = Restarter(process, relaunch)
    restarter.start()
    if group is not None:
        launcher.watch_group(role, group)
        where = f"cgroup v{group.version} {group.memory_dir}"
    else:
        launcher.watch_process_group(role, process.pid or 0)
        where = "UNPINNED"
    in_zone = f", zone {zone}" if zone is not None else ""
    launcher.placement.append(
        f"{role}: pid {process.pid}, {url}, {where}, CPUs {cpu_list(cpus)}{in_zone}"
    )
    return Replica(index, role, zone, url, process, restarter, pinned=group is not None)
