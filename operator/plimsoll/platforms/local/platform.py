"""The local platform: the target, the mock, the generators and services as processes here.

`plimsoll run` builds one per variant and hands it to the runner. It starts
the services, the mock (`python -m plimsoll_mock`), the target (pinned with
cgroups to the spec's shape, restarted if it dies between trials) and the
generators (`python -m plimsoll_generator`), waits until each answers, runs the
target's setup commands, keeps the generators and the mock off the target's
CPUs where there are enough cores, and samples every process's CPU and
memory. Given an exporter, it also serves every process under cAdvisor's names
(`metrics`); given a Prometheus URL, it reads the figures back from that
server with the Kubernetes platform's PromQL instead of its own samplers.
`stop` runs the target's teardown commands while the services still run, then
ends every process group it started and removes its cgroups. Every process
gets `PLIMSOLL_WORKDIR` (the variant's work directory, where a service keeps
its data and a target its embedded store) and finds the interpreter Plimsoll
runs under first on its PATH, so `python` in a command is the one whose
packages Plimsoll has. The
target's own start lives in `target`, the services in `pieces`, and what
they share (start, pin, measure one process) in `launcher`.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plimsoll.api.host import HostDescription
from plimsoll.api.spec import CapacityTestSpec, SetupStep
from plimsoll.api.trial import CONTROL_TOKEN_ENV
from plimsoll.api.upstream import Upstream, mock_role
from plimsoll.api.urls import redact_url
from plimsoll.metrics.exporter import CadvisorExporter
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.sampler import LocalSource, Sampler
from plimsoll.metrics.source import ROLE_HOST, ROLE_TARGET, MetricsSource
from plimsoll.platforms.base import Endpoints, PlatformError, TargetRoom
from plimsoll.platforms.local.exported import (
    LocalExport,
    LocalSourceWithRestarts,
    await_scraped,
    prometheus_source,
)
from plimsoll.platforms.local.host import describe_host, meminfo_bytes
from plimsoll.platforms.local.launcher import Launcher
from plimsoll.platforms.local.pieces import missing_value_from, start_services
from plimsoll.platforms.local.pinning import PinnedGroup
from plimsoll.platforms.local.processes import (
    ManagedProcess,
    PortHold,
    cpu_list,
    free_port,
    wait_ready,
)
from plimsoll.platforms.local.replicas import LocalReplicas
from plimsoll.platforms.local.restarter import Restarter
from plimsoll.platforms.local.started import LocalRun
from plimsoll.platforms.local.target import Replica, start_target

log = logging.getLogger(__name__)


def split_cpus(
    target_cores: float, available: list[int]
) -> tuple[set[int] | None, set[int] | None]:
    """(target CPUs, everyone else's CPUs), or (None, None) when there are too few to split."""
    need = max(math.ceil(target_cores), 1)
    if len(available) < need + 1:
        return None, None
    return set(available[-need:]), set(available[:-need])


@dataclass(frozen=True)
class _GeneratorLaunch:
    """What every generator of the run starts with: the first ones and those added later."""

    env: dict[str, str]
    cpus: set[int] | None
    processes: int


class LocalPlatform:
    name = "local"

    def __init__(
        self,
        run_id: str,
        workdir: Path,
        *,
        cgroup_root: Path | None = None,
        allow_unpinned: bool = False,
        exporter: CadvisorExporter | None = None,
        prometheus_url: str | None = None,
        scrape_wait: float = 120.0,
    ) -> None:
        if prometheus_url is not None and exporter is None:
            raise ValueError("reading Prometheus needs the exporter it scrapes")
        self.run_id = run_id
        # The run id is the namespace label: variants and runs never share a series.
        export = LocalExport(exporter, run_id) if exporter is not None else None
        self.launcher = Launcher(
            run_id, workdir, cgroup_root=cgroup_root, allow_unpinned=allow_unpinned, export=export
        )
        self.restarter: Restarter | None = None  # replica 0's: its restarts are the target's
        self.replicas: list[Replica] = []
        self.prometheus_url = prometheus_url
        self.prometheus: PrometheusSource | None = None
        self.scrape_wait = scrape_wait
        self.equipment: list[tuple[str, ManagedProcess, str]] = []  # role, process, URL
        # Roles measured through their own cgroup: a replacement joins the same group.
        self._pinned_equipment: set[str] = set()
        self.mock_urls: dict[str, str] = {}  # by role: "mock", "mock-auth", ...
        self.floor_url: str | None = None  # the default mock's floor process
        self.teardown: list[SetupStep] = []
        self._generator_launch: _GeneratorLaunch | None = None
        self.autoscaled: LocalReplicas | None = None  # a flight's replicas (issue 57)

    @property
    def processes(self) -> list[ManagedProcess]:
        """Every process started so far, in start order."""
        return self.launcher.processes

    async def _start_equipment(
        self,
        role: str,
        argv: list[str],
        port: int,
        env: dict[str, str],
        cpus: set[int] | None,
        group: PinnedGroup | None = None,
    ) -> tuple[ManagedProcess, str]:
        """Start the mock or a generator on `port` of 127.0.0.1, off the target's CPUs (in
        `group` when it has a shape), and measure it once /healthz answers; the process and
        its URL."""
        argv = [*argv, "--port", str(port), "--host", "127.0.0.1"]
        process = self.launcher.process(role, argv, env, group=group, cpus=cpus)
        await process.start()
        url = f"http://127.0.0.1:{port}"
        await wait_ready(process, url=f"{url}/healthz", within=30)
        if group is not None:
            self.launcher.watch_group(role, group)  # its limit is then known: saturation too
            self._pinned_equipment.add(role)
        else:
            self.launcher.watch_process_group(role, process.pid or 0)
        self.equipment.append((role, process, url))
        return process, url

    async def _start_mock(
        self, name: str | None, upstream: Upstream, env: dict[str, str], cpus: set[int] | None
    ) -> str:
        """Start one mock (the default for None) with its own config file; its URL."""
        role = mock_role(name)
        config = self.launcher.workdir / f"{role}-config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(upstream.to_wire_json())
        shape = upstream.resources
        group = (
            self.launcher.pin(
                role,
                shape.cpu,
                shape.memory,
                f"{role} runs without its resources shape, so a saturated mock "
                "cannot be told from a slow target",
            )
            if shape is not None
            else None
        )
        argv = [sys.executable, "-m", "plimsoll_mock", "--config", str(config)]
        if name is None:  # the default mock serves the direct-call floor too
            floor_port = free_port()
            argv += ["--floor-port", str(floor_port)]
            self.floor_url = f"http://127.0.0.1:{floor_port}/floor"
        mock, url = await self._start_equipment(
            role,
            argv,
            free_port(),
            env,
            cpus,
            group,
        )
        self.mock_urls[role] = url
        if name is None:
            self.launcher.placement.append(
                f"direct-call floor: {self.floor_url} (the mock's own floor process)"
            )
        pinned = f", cgroup v{group.version} {group.cpu_dir}" if group else ""
        self.launcher.placement.append(
            f"{role}: pid {mock.pid}, {url}{pinned}, CPUs {cpu_list(cpus)}"
        )
        return url

    def describe_host(self) -> HostDescription:
        """This machine, for the report: the seeds' figures, and these, are its."""
        return describe_host()

    def target_room(self, spec: CapacityTestSpec) -> TargetRoom:
        """For each of `spec`'s target replicas: a share of every CPU but one (the
        equipment keeps one apart, `split_cpus`) and of the memory available now."""
        replicas = max(spec.target.replicas, 1)
        cpus = max(len(os.sched_getaffinity(0)) - 1, 0)
        memory = meminfo_bytes("MemAvailable")  # what a new program could take
        return TargetRoom(cpus / replicas, None if memory is None else memory // replicas)

    def _base_env(self) -> dict[str, str]:
        """What every process starts with: ours, its work directory, and our interpreter
        first on its PATH (as an activated virtualenv would: `python` is the one running
        us)."""
        workdir = self.launcher.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "PLIMSOLL_WORKDIR": str(workdir),
            "PATH": os.pathsep.join(
                [str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)]
            ),
        }

    async def _start_targets(
        self, spec: CapacityTestSpec, env: dict[str, str], mock_url: str, cpus: set[int] | None
    ) -> str:
        """Every replica of the target, pinned; the URL the generators send to (an existing
        service's, redacted, when there is nothing to start)."""
        launcher = self.launcher
        if spec.target.url is not None:
            target_url = redact_url(spec.target.url.rstrip("/"))
            launcher.warnings.append(
                f"target {target_url} is an existing service: nothing was started or pinned; "
                "its shape and resources are unknown unless metrics are configured"
            )
            launcher.placement.append(f"target: existing service at {target_url} (not started)")
            return target_url
        autoscaler = spec.target.autoscaler
        if autoscaler is None:
            for index in range(spec.target.replicas):
                self.replicas.append(await start_target(launcher, spec, env, mock_url, cpus, index))
        else:  # a flight: every replica's port held now, the fewest the autoscaler runs started
            holds = [PortHold() for _ in range(autoscaler.max_replicas)]

            async def start(index: int) -> Replica:
                holds[index].release()
                port = holds[index].port
                return await start_target(launcher, spec, env, mock_url, cpus, index, port)

            for index in range(autoscaler.min_replicas):
                self.replicas.append(await start(index))
            self.autoscaled = LocalReplicas(launcher, spec, start, holds, self.replicas)
            launcher.placement.append(
                f"target: {autoscaler.min_replicas} to {autoscaler.max_replicas} replicas, "
                "scaled by the HPA's decisions made here (simulated locally, issue 57)"
            )
        self.restarter = self.replicas[0].restarter
        return self.replicas[0].url

    def _replica_urls(self) -> list[str]:
        """Every replica's URL when there may be more than one; the autoscaler's room to
        grow included."""
        if self.autoscaled is not None:
            return [f"http://127.0.0.1:{hold.port}" for hold in self.autoscaled.holds]
        return [r.url for r in self.replicas] if len(self.replicas) > 1 else []

    async def _metrics_source(self, spec: CapacityTestSpec) -> MetricsSource:
        """The samplers started, the host's total among them (what other programs took,
        `decide.contention`); Prometheus once it has scraped the exporter, when given."""
        launcher = self.launcher
        host = Sampler.for_host()
        launcher.source.add(ROLE_HOST, host)
        launcher.source.start()
        export = launcher.export
        if self.prometheus_url is None or export is None:
            return LocalSourceWithRestarts(launcher.source, self.restarter)
        services = [s.name for s in spec.services]
        self.prometheus = prometheus_source(
            self.prometheus_url, self.run_id, spec, services, [u.name for u in spec.upstreams]
        )
        if spec.target.url is not None:  # nothing of ours to select: no target series
            del self.prometheus.selectors[ROLE_TARGET]
        # The pieces run here whichever source reads them: the host's total beside them.
        self.prometheus.beside = LocalSource({ROLE_HOST: host})
        await await_scraped(self.prometheus, export.exporter, within=self.scrape_wait)
        launcher.placement.append(
            f"metrics: Prometheus {self.prometheus_url}, scraping "
            f"{export.exporter.url} (namespace {self.run_id!r})"
        )
        return self.prometheus

    async def start(
        self, spec: CapacityTestSpec, every_variant: Sequence[CapacityTestSpec]
    ) -> LocalRun:
        del every_variant  # nothing here spans variants: each runs its own processes
        launcher = self.launcher
        warnings, placement = launcher.warnings, launcher.placement
        base_env = self._base_env()
        self.teardown = list(spec.target.teardown)
        missing = missing_value_from(spec, base_env)
        if missing is not None:
            raise PlatformError(missing)
        available = sorted(os.sched_getaffinity(0))
        shape = spec.target.resources
        # Every replica shares the target's CPUs, each held to its own shape by its cgroup
        # (a flight's, as many as its autoscaler may run).
        most = spec.target.autoscaler.max_replicas if spec.target.autoscaler else None
        target_cores = shape.cpu * (most or spec.target.replicas) if shape else 0
        target_cpus, other_cpus = split_cpus(target_cores, available)
        if target_cpus is None and spec.target.url is None:
            warnings.append(f"only {len(available)} CPU(s): generators share the target's CPUs")

        service_env = await start_services(launcher, spec.services, base_env)
        mock_url = await self._start_mock(None, spec.upstream, base_env, other_cpus)
        # Each named mock (auth, metering) is a process of its own, measured as its own role.
        mock_env = {
            named.env_var: await self._start_mock(
                named.name, named.upstream(), base_env, other_cpus
            )
            for named in spec.upstreams
        }
        env = {**base_env, **service_env, **mock_env}
        target_url = await self._start_targets(spec, env, mock_url, target_cpus)
        token, urls = await self._start_generators(spec, base_env, other_cpus)
        source = await self._metrics_source(spec)
        endpoints = Endpoints(
            target_url,
            mock_url,
            urls,
            placement=list(placement),
            warnings=list(warnings),
            control_token=token,
            floor_url=self.floor_url,
            replica_urls=self._replica_urls(),
            serving_replicas=len(self.replicas) if self.autoscaled is not None else None,
            replica_pool=self.autoscaled,
            target_pinned=all(r.pinned for r in self.replicas) if self.replicas else None,
            equipment_cpus=len(other_cpus) if other_cpus else None,
        )
        return LocalRun(
            launcher,
            self.replicas,
            self.equipment,
            self._pinned_equipment,
            source,
            self._start_generator,
            endpoints,
        )

    async def _start_generators(
        self, spec: CapacityTestSpec, base_env: dict[str, str], cpus: set[int] | None
    ) -> tuple[str, list[str]]:
        """The run's first generators; (their control token, their URLs)."""
        # A fresh secret per run: another local user cannot drive (or hijack) these
        # generators, which accept trials on a loopback port anyone here can reach.
        token = secrets.token_urlsafe(24)
        generators = spec.generators
        # Sized (replicas: auto, the default here): one worker per generator process, so
        # the count the runner asks for is the count of processes sending load.
        sized = generators.sized(auto_by_default=LocalRun.generators_sized_by_default)
        processes = 1 if sized else (generators.fixed_processes or 1)
        self._generator_launch = _GeneratorLaunch(
            {**base_env, CONTROL_TOKEN_ENV: token}, cpus, processes
        )
        return token, [await self._start_generator(i) for i in range(generators.fixed_replicas)]

    async def _start_generator(self, index: int) -> str:
        """Start generator number `index` (a control server of its own); its URL."""
        launch = self._generator_launch
        assert launch is not None, "generators start after the platform's start"
        role = "generator" if index == 0 else f"generator-{index}"
        argv = [sys.executable, "-m", "plimsoll_generator", "--processes", str(launch.processes)]
        generator, url = await self._start_equipment(
            role, argv, free_port(), launch.env, launch.cpus
        )
        self.launcher.placement.append(
            f"{role}: pid {generator.pid}, {launch.processes} process(es), "
            f"CPUs {cpu_list(launch.cpus)}"
        )
        return url

    async def stop(self, *, keep: bool) -> None:
        """Stops every process (always: a local process left running is an orphan); `keep`
        keeps the logs and mock config in the work directory, which are removed otherwise."""
        del keep  # logs stay in the output folder either way: they are part of the report
        for replica in self.replicas:
            await replica.restarter.stop()
        if self.autoscaled is not None:
            for hold in self.autoscaled.holds:
                hold.release()
        await self._run_teardown()
        await self.launcher.stop()

    async def _run_teardown(self) -> None:
        """The target's teardown commands, after the target stopped and before the
        services do (they clean what the setup put in them). A failure is logged, not
        raised: the run's figures are already measured and must still be reported."""
        env = self.launcher.step_env
        if not self.teardown or env is None:  # the target never started: nothing to undo
            return
        try:
            await self.launcher.run_setup(self.teardown, env, kind="teardown")
        except PlatformError as exc:
            log.warning("teardown: %s", exc)
