"""What the local platform's start steps share: start, pin and measure one process.

`LocalPlatform.start` hands one `Launcher` to the steps that start the services
(`pieces`) and the target (`target`), so they never reach into the platform.
It owns everything a stop must undo (the processes in start order, the cgroups)
and collects what the run should tell the user (warnings, where each piece runs).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from plimsoll.api.spec import SetupStep
from plimsoll.metrics.cgroup import CgroupPaths
from plimsoll.metrics.sampler import LocalSource, Sampler
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local import pinning, pinning_rights
from plimsoll.platforms.local.exported import LocalExport
from plimsoll.platforms.local.leftovers import RUN_MARK_ENV
from plimsoll.platforms.local.processes import ManagedProcess

log = logging.getLogger(__name__)


@dataclass
class Launcher:
    run_id: str
    workdir: Path
    cgroup_root: Path | None = None
    # False (the default): a piece that cannot be pinned stops the start with the reason,
    # never a silent unpinned run; True: `plimsoll run --unpinned`, said in every report.
    allow_unpinned: bool = False
    export: LocalExport | None = None
    source: LocalSource = field(default_factory=LocalSource)
    processes: list[ManagedProcess] = field(default_factory=list)  # stopped in reverse
    groups: list[pinning.PinnedGroup] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    placement: list[str] = field(default_factory=list)  # human-readable: who runs where
    step_env: dict[str, str] | None = None  # the setup steps' env, once the target started

    def process(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        *,
        group: pinning.PinnedGroup | None = None,
        cpus: set[int] | None = None,
    ) -> ManagedProcess:
        """A process (not started yet) logging to logs/NAME.log, in `group` when pinned."""
        log_path = self.workdir / "logs" / f"{name}.log"
        procs = group.procs_files if group is not None else ()
        # The mark lets the next run find whatever this process forks, should the
        # runner be killed before it can stop them (`leftovers`).
        marked = {**env, RUN_MARK_ENV: self.run_id}
        process = ManagedProcess(name, argv, marked, log_path, cgroup_procs=procs, cpus=cpus)
        self.processes.append(process)
        return process

    def pin(
        self, role: str, cores: float, memory: int, consequence: str | None = None
    ) -> pinning.PinnedGroup | None:
        """A cgroup with the shape's limits. Where cgroups can't be written: a PlatformError
        saying how to get the rights, or, when unpinned runs are allowed, None with a
        warning (the piece then runs unpinned and the report says so). `consequence` says
        what that costs, for a piece whose shape is not the ceiling's (the mock)."""
        try:
            hierarchy = pinning.discover(self.cgroup_root)
            group = pinning.create_group(hierarchy, self.run_id, role, cores, memory)
        except pinning.CgroupsUnavailableError as exc:
            if not self.allow_unpinned:
                refused = pinning_rights.refusal(cores, memory, str(exc), "plimsoll run FILE")
                raise PlatformError(refused.replace("the target", f"the {role}", 1)) from exc
            what = consequence or (
                f"the {role} runs UNPINNED, so its ceiling is not that of the requested shape"
            )
            self.warnings.append(
                f"cgroups not permitted ({exc}): {what} "
                "(run as root, or on a host with writable cgroups)"
            )
            log.warning("%s", self.warnings[-1])
            return None
        self.groups.append(group)
        return group

    def watch_process_group(self, role: str, pgid: int) -> None:
        """Measure an unpinned process: sampled here, and exported when serving metrics."""
        self.source.add(role, Sampler.for_process_group(pgid))
        if self.export is not None:
            self.export.add(role, pgid=pgid)

    async def rewatch_process_group(self, role: str, pgid: int) -> None:
        """After an unpinned process restarted: measure the new process group instead."""
        old = self.source.samplers.get(role)
        if old is not None:
            await old.stop()
        self.watch_process_group(role, pgid)
        self.source.samplers[role].start()

    def watch_group(self, role: str, group: pinning.PinnedGroup) -> None:
        """Measure a pinned piece through its cgroup, as cAdvisor does a container."""
        version: Literal[1, 2] = 2 if group.version == 2 else 1
        paths = CgroupPaths(version, group.cpu_dir, group.memory_dir, group.cpuacct_dir)
        self.source.add(role, Sampler.for_cgroup(paths))
        if self.export is not None:
            self.export.add(role, paths=paths)

    async def run_setup(
        self, steps: list[SetupStep], env: dict[str, str], kind: str = "setup"
    ) -> None:
        """Run each setup (or teardown) command to completion, in order; the first that
        fails or overruns its timeout raises with its last log lines."""
        for step in steps:
            process = self.process(f"{kind}-{step.name}", step.command, {**env, **step.env})
            await process.start()
            assert process.process is not None
            try:
                async with asyncio.timeout(step.timeout):  # not wait_for: see restarter
                    code = await process.process.wait()
            except TimeoutError:
                await process.stop()
                raise PlatformError(
                    process.died_message(f"did not finish within {step.timeout:g}s")
                ) from None
            if code != 0:
                raise PlatformError(process.died_message("failed"))

    async def stop(self) -> None:
        """Stop every process (newest first) and remove every cgroup."""
        await self.source.stop()
        if self.export is not None:
            self.export.remove_all()
        for process in reversed(self.processes):
            await process.stop()
        for group in self.groups:
            for problem in pinning.remove_group(group):
                log.warning("cgroup clean-up: %s", problem)
        self.groups.clear()
