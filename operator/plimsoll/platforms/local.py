"""The local platform: the target, the mock, the generators and services as processes here.

`plimsoll run` builds one per variant and hands it to the runner. It starts
the services, the mock (`python -m plimsoll_mock`), the target (pinned with
cgroups to the spec's shape, restarted if it dies between trials) and the
generators (`python -m plimsoll_generator`), waits until each answers, runs the
target's setup commands, keeps the generators and the mock off the target's
CPUs where there are enough cores, and samples every process's CPU and
memory. `stop` ends every process group it started and removes its cgroups.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from pathlib import Path
from typing import Literal

from plimsoll.api.spec import CapacityTestSpec, Variant
from plimsoll.api.step import ResourceUsage
from plimsoll.metrics.cgroup import CgroupPaths
from plimsoll.metrics.sampler import LocalSource, Sampler
from plimsoll.metrics.source import ROLE_MOCK, ROLE_TARGET, Window
from plimsoll.platforms import cgroups
from plimsoll.platforms.base import Endpoints, PlatformError
from plimsoll.platforms.local_pieces import Pieces, start_services, target_command
from plimsoll.platforms.processes import ManagedProcess, free_port, port_is_free, wait_ready
from plimsoll.platforms.supervisor import Supervisor

log = logging.getLogger(__name__)


def split_cpus(
    target_cores: float, available: list[int]
) -> tuple[set[int] | None, set[int] | None]:
    """(target CPUs, everyone else's CPUs), or (None, None) when there are too few to split."""
    need = max(math.ceil(target_cores), 1)
    if len(available) < need + 1:
        return None, None
    return set(available[-need:]), set(available[:-need])


class LocalSourceWithRestarts:
    """The metrics engineer's LocalSource, plus the target's restarts in each window."""

    def __init__(self, source: LocalSource, supervisor: Supervisor | None) -> None:
        self.source = source
        self.supervisor = supervisor

    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        usage = await self.source.usage(window)
        target = usage.get(ROLE_TARGET)
        if target is not None and target.source == "proc":
            # Unpinned, the target has no memory limit of its own, so no limit can OOM-kill
            # it: that figure is not missing, it does not apply (restarts still count).
            target.missing = [m for m in target.missing if "OOM kills" not in m]
        if target is not None and self.supervisor is not None:
            target.restarts = self.supervisor.restarts_between(
                window.start.timestamp(), window.end.timestamp()
            )
        return usage


class LocalPlatform:
    name = "local"

    def __init__(self, run_id: str, workdir: Path, *, cgroup_root: Path | None = None) -> None:
        self.run_id = run_id
        self.workdir = workdir
        self.cgroup_root = cgroup_root
        self.pieces = Pieces()
        self.source = LocalSource()
        self.supervisor: Supervisor | None = None
        self.groups: list[cgroups.PinnedGroup] = []

    def _process(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        *,
        cgroup_procs: list[Path] | tuple[()] = (),
        cpus: set[int] | None = None,
    ) -> ManagedProcess:
        log_path = self.workdir / "logs" / f"{name}.log"
        process = ManagedProcess(name, argv, env, log_path, cgroup_procs=cgroup_procs, cpus=cpus)
        self.pieces.processes.append(process)
        return process

    def _pin(
        self, role: str, cores: float, memory: int, warnings: list[str]
    ) -> cgroups.PinnedGroup | None:
        try:
            hierarchy = cgroups.discover(self.cgroup_root)
            group = cgroups.create_group(hierarchy, self.run_id, role, cores, memory)
        except cgroups.CgroupsUnavailableError as exc:
            warnings.append(
                f"cgroups not permitted ({exc}): the {role} runs UNPINNED, so its ceiling is "
                "not that of the requested shape (run as root, or on a host with writable cgroups)"
            )
            log.warning("%s", warnings[-1])
            return None
        self.groups.append(group)
        return group

    async def start(self, spec: CapacityTestSpec, variant: Variant | None) -> Endpoints:
        warnings: list[str] = []
        placement: list[str] = []
        base_env = dict(os.environ)
        available = sorted(os.sched_getaffinity(0))
        shape = spec.target.resources
        target_cpus, other_cpus = split_cpus(shape.cpu if shape else 0, available)
        if target_cpus is None and spec.target.url is None:
            warnings.append(f"only {len(available)} CPU(s): generators share the target's CPUs")

        service_env = await start_services(self, spec, variant, base_env, warnings, placement)

        mock_port = free_port()
        config = self.workdir / "mock-config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(spec.upstream.model_dump_json(by_alias=True, exclude_none=True))
        mock = self._process(
            "mock",
            [
                sys.executable,
                "-m",
                "plimsoll_mock",
                "--config",
                str(config),
                "--port",
                str(mock_port),
                "--host",
                "127.0.0.1",
            ],
            base_env,
            cpus=other_cpus,
        )
        await mock.start()
        mock_url = f"http://127.0.0.1:{mock_port}"
        await wait_ready(mock, url=f"{mock_url}/healthz", within=30)
        self.source.add(ROLE_MOCK, Sampler.for_process_group(mock.pid or 0))
        placement.append(f"mock: pid {mock.pid}, {mock_url}, CPUs {_cpus(other_cpus)}")

        if spec.target.url is not None:
            target_url = spec.target.url.rstrip("/")
            warnings.append(
                f"target {target_url} is an existing service: nothing was started or pinned; "
                "its shape and resources are unknown unless metrics are configured"
            )
            placement.append(f"target: existing service at {target_url} (not started)")
        else:
            target_url = await self._start_target(
                spec, variant, base_env, service_env, mock_url, target_cpus, warnings, placement
            )

        urls = []
        processes = spec.generators.processes or 1
        for index in range(spec.generators.replicas):
            port = free_port()
            role = "generator" if index == 0 else f"generator-{index}"
            generator = self._process(
                role,
                [
                    sys.executable,
                    "-m",
                    "plimsoll_generator",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--processes",
                    str(processes),
                ],
                base_env,
                cpus=other_cpus,
            )
            await generator.start()
            url = f"http://127.0.0.1:{port}"
            await wait_ready(generator, url=f"{url}/healthz", within=30)
            self.source.add(role, Sampler.for_process_group(generator.pid or 0))
            urls.append(url)
            placement.append(
                f"{role}: pid {generator.pid}, {processes} process(es), CPUs {_cpus(other_cpus)}"
            )
        self.source.start()
        return Endpoints(target_url, mock_url, urls, placement=placement, warnings=warnings)

    async def _start_target(
        self,
        spec: CapacityTestSpec,
        variant: Variant | None,
        base_env: dict[str, str],
        service_env: dict[str, str],
        mock_url: str,
        cpus: set[int] | None,
        warnings: list[str],
        placement: list[str],
    ) -> str:
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
        group = self._pin("target", shape.cpu, shape.memory, warnings) if shape else None
        process = self._process(
            "target", argv, env, cgroup_procs=group.procs_files if group else (), cpus=cpus
        )
        url = f"http://127.0.0.1:{port}"
        ready_url = url + target.readiness_path

        async def launch() -> None:
            await process.start()
            await wait_ready(process, url=ready_url, within=target.startup_timeout)

        await launch()
        await self.pieces.run_setup(self, spec, env)
        self.supervisor = Supervisor(process, launch)
        self.supervisor.start()
        if group is not None:
            version: Literal[1, 2] = 2 if group.version == 2 else 1
            paths = CgroupPaths(version, group.cpu_dir, group.memory_dir, group.cpuacct_dir)
            self.source.add(ROLE_TARGET, Sampler.for_cgroup(paths))
            where = f"cgroup v{group.version} {group.memory_dir}"
        else:
            self.source.add(ROLE_TARGET, Sampler.for_process_group(process.pid or 0))
            where = "UNPINNED"
        placement.append(f"target: pid {process.pid}, {url}, {where}, CPUs {_cpus(cpus)}")
        return url

    async def ensure_ready(self) -> None:
        """Before each trial: wait out a restart of the target; raise if it cannot run."""
        if self.supervisor is not None:
            await self.supervisor.ensure_ready(within=120)

    def metrics(self) -> LocalSourceWithRestarts:
        return LocalSourceWithRestarts(self.source, self.supervisor)

    async def stop(self, *, keep: bool) -> None:
        """Stops every process (always: a local process left running is an orphan); `keep`
        keeps the logs and mock config in the work directory, which are removed otherwise."""
        del keep  # logs stay in the output folder either way: they are part of the report
        if self.supervisor is not None:
            await self.supervisor.stop()
        await self.source.stop()
        for process in reversed(self.pieces.processes):
            await process.stop()
        for group in self.groups:
            for problem in cgroups.remove_group(group):
                log.warning("cgroup clean-up: %s", problem)
        self.groups.clear()


def _cpus(cpus: set[int] | None) -> str:
    return ",".join(str(c) for c in sorted(cpus)) if cpus else "any"
