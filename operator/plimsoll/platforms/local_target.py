"""The target on the local platform: its port, its shape, its restarts, its measuring.

Split from `plimsoll.platforms.local` to keep each module one concept (as
`local_pieces` holds the services and setup): `start_target` picks the port
(a free one when the target reads it from its env), pins the target with
cgroups to the spec's shape, starts it and waits for its readiness path, runs
the setup commands, hands it to a `Supervisor` that restarts it if it dies
between trials, and samples (and exports) its cgroup, or its process group
when it runs unpinned. `LocalPlatform.start` calls it after the mock is up,
since the target is told the mock's URL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from plimsoll.api.spec import CapacityTestSpec, Variant
from plimsoll.metrics.cgroup import CgroupPaths
from plimsoll.metrics.sampler import Sampler
from plimsoll.metrics.source import ROLE_TARGET
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local_pieces import target_command
from plimsoll.platforms.processes import cpu_list, free_port, port_is_free, wait_ready
from plimsoll.platforms.supervisor import Supervisor

if TYPE_CHECKING:
    from plimsoll.platforms.local import LocalPlatform


async def start_target(
    platform: LocalPlatform,
    spec: CapacityTestSpec,
    variant: Variant | None,
    base_env: dict[str, str],
    service_env: dict[str, str],
    mock_url: str,
    cpus: set[int] | None,
    warnings: list[str],
    placement: list[str],
) -> str:
    """Start the target (its supervisor on `platform.supervisor`); its URL."""
    argv, env = target_command(spec, variant)
    target = spec.target
    port = target.port
    if target.port_env is not None:
        port = free_port()  # the target learns it from its env: no clash with anything
    elif not port_is_free(port):
        raise PlatformError(
            f"port {port} (target.port) is already in use on 127.0.0.1: stop whatever "
            "listens there, or set target.portEnv so Plimsoll can pick a free port"
        )
    env = {**base_env, **service_env, **env, target.upstream_env: mock_url}
    if target.port_env is not None:
        env[target.port_env] = str(port)
    shape = target.resources
    group = platform._pin("target", shape.cpu, shape.memory, warnings) if shape else None
    process = platform._process(
        "target", argv, env, cgroup_procs=group.procs_files if group else (), cpus=cpus
    )
    url = f"http://127.0.0.1:{port}"
    ready_url = url + target.readiness_path

    async def launch() -> None:
        await process.start()
        await wait_ready(process, url=ready_url, within=target.startup_timeout)

    async def relaunch() -> None:
        if platform.export is not None:
            platform.export.restarted(ROLE_TARGET, process.returncode)
        await launch()
        if group is None:  # a new process group: measure the new one
            old = platform.source.samplers.get(ROLE_TARGET)
            if old is not None:
                await old.stop()
            platform._watch(ROLE_TARGET, process.pid or 0)
            platform.source.samplers[ROLE_TARGET].start()

    await launch()
    await platform.pieces.run_setup(platform, spec, env)
    platform.supervisor = Supervisor(process, relaunch)
    platform.supervisor.start()
    if group is not None:
        version: Literal[1, 2] = 2 if group.version == 2 else 1
        paths = CgroupPaths(version, group.cpu_dir, group.memory_dir, group.cpuacct_dir)
        platform.source.add(ROLE_TARGET, Sampler.for_cgroup(paths))
        if platform.export is not None:
            platform.export.add(ROLE_TARGET, paths=paths)
        where = f"cgroup v{group.version} {group.memory_dir}"
    else:
        platform._watch(ROLE_TARGET, process.pid or 0)
        where = "UNPINNED"
    placement.append(f"target: pid {process.pid}, {url}, {where}, CPUs {cpu_list(cpus)}")
    return url
