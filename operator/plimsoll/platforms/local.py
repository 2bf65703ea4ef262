"""The local platform: the target, the mock, the generators and services as processes here.

`plimsoll run` builds one per variant and hands it to the runner. It starts
the services, the mock (`python -m plimsoll_mock`), the target (pinned with
cgroups to the spec's shape, restarted if it dies between trials) and the
generators (`python -m plimsoll_generator`), waits until each answers, runs the
target's setup commands, keeps the generators and the mock off the target's
CPUs where there are enough cores, and samples every process's CPU and
memory. Given an exporter, it also serves every process under cAdvisor's names
(`local_metrics`); given a Prometheus URL, it reads the figures back from that
server with the Kubernetes platform's PromQL instead of its own samplers.
`stop` ends every process group it started and removes its cgroups. The
target's own start lives in `local_target`, the services and setup commands in
`local_pieces`.
"""

from __future__ import annotations

import logging
import math
import os
import sys
from pathlib import Path

from plimsoll.api.spec import CapacityTestSpec, Variant
from plimsoll.metrics.exporter import CadvisorExporter
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.sampler import LocalSource, Sampler
from plimsoll.metrics.source import ROLE_MOCK, ROLE_TARGET, MetricsSource
from plimsoll.platforms import cgroups
from plimsoll.platforms.base import Endpoints
from plimsoll.platforms.local_metrics import (
    LocalExport,
    LocalSourceWithRestarts,
    await_scraped,
    prometheus_source,
)
from plimsoll.platforms.local_pieces import Pieces, services_of, start_services
from plimsoll.platforms.local_target import start_target
from plimsoll.platforms.processes import ManagedProcess, cpu_list, free_port, wait_ready
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


class LocalPlatform:
    name = "local"

    def __init__(
        self,
        run_id: str,
        workdir: Path,
        *,
        cgroup_root: Path | None = None,
        exporter: CadvisorExporter | None = None,
        prometheus_url: str | None = None,
        scrape_wait: float = 120.0,
    ) -> None:
        if prometheus_url is not None and exporter is None:
            raise ValueError("reading Prometheus needs the exporter it scrapes")
        self.run_id = run_id
        self.workdir = workdir
        self.cgroup_root = cgroup_root
        self.pieces = Pieces()
        self.source = LocalSource()
        self.supervisor: Supervisor | None = None
        self.groups: list[cgroups.PinnedGroup] = []
        # The run id is the namespace label: variants and runs never share a series.
        self.export = LocalExport(exporter, run_id) if exporter is not None else None
        self.prometheus_url = prometheus_url
        self.prometheus: PrometheusSource | None = None
        self.scrape_wait = scrape_wait

    def _watch(self, role: str, pgid: int) -> None:
        """Measure an unpinned process: sampled here, and exported when serving metrics."""
        self.source.add(role, Sampler.for_process_group(pgid))
        if self.export is not None:
            self.export.add(role, pgid=pgid)

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

    async def _start_equipment(
        self, role: str, argv: list[str], port: int, env: dict[str, str], cpus: set[int] | None
    ) -> tuple[ManagedProcess, str]:
        """Start the mock or a generator on `port` of 127.0.0.1, off the target's CPUs, and
        measure it once /healthz answers; the process and its URL."""
        process = self._process(
            role, [*argv, "--port", str(port), "--host", "127.0.0.1"], env, cpus=cpus
        )
        await process.start()
        url = f"http://127.0.0.1:{port}"
        await wait_ready(process, url=f"{url}/healthz", within=30)
        self._watch(role, process.pid or 0)
        return process, url

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
        mock, mock_url = await self._start_equipment(
            ROLE_MOCK,
            [sys.executable, "-m", "plimsoll_mock", "--config", str(config)],
            mock_port,
            base_env,
            other_cpus,
        )
        placement.append(f"mock: pid {mock.pid}, {mock_url}, CPUs {cpu_list(other_cpus)}")

        if spec.target.url is not None:
            target_url = spec.target.url.rstrip("/")
            warnings.append(
                f"target {target_url} is an existing service: nothing was started or pinned; "
                "its shape and resources are unknown unless metrics are configured"
            )
            placement.append(f"target: existing service at {target_url} (not started)")
        else:
            target_url = await start_target(
                self,
                spec,
                variant,
                base_env,
                service_env,
                mock_url,
                target_cpus,
                warnings,
                placement,
            )

        urls = []
        processes = spec.generators.processes or 1
        for index in range(spec.generators.replicas):
            role = "generator" if index == 0 else f"generator-{index}"
            generator, url = await self._start_equipment(
                role,
                [sys.executable, "-m", "plimsoll_generator", "--processes", str(processes)],
                free_port(),
                base_env,
                other_cpus,
            )
            urls.append(url)
            placement.append(
                f"{role}: pid {generator.pid}, {processes} process(es), CPUs {cpu_list(other_cpus)}"
            )
        self.source.start()
        if self.prometheus_url is not None and self.export is not None:
            services = [s.name for s in services_of(spec, variant)]
            self.prometheus = prometheus_source(self.prometheus_url, self.run_id, spec, services)
            if spec.target.url is not None:  # nothing of ours to select: no target series
                del self.prometheus.selectors[ROLE_TARGET]
            await await_scraped(self.prometheus, self.export.exporter, within=self.scrape_wait)
            placement.append(
                f"metrics: Prometheus {self.prometheus_url}, scraping "
                f"{self.export.exporter.url} (namespace {self.run_id!r})"
            )
        return Endpoints(target_url, mock_url, urls, placement=placement, warnings=warnings)

    async def ensure_ready(self) -> None:
        """Before each trial: wait out a restart of the target; raise if it cannot run."""
        if self.supervisor is not None:
            await self.supervisor.ensure_ready(within=120)

    def metrics(self) -> MetricsSource:
        if self.prometheus is not None:
            return self.prometheus
        return LocalSourceWithRestarts(self.source, self.supervisor)

    async def stop(self, *, keep: bool) -> None:
        """Stops every process (always: a local process left running is an orphan); `keep`
        keeps the logs and mock config in the work directory, which are removed otherwise."""
        del keep  # logs stay in the output folder either way: they are part of the report
        if self.supervisor is not None:
            await self.supervisor.stop()
        await self.source.stop()
        if self.export is not None:
            self.export.remove_all()
        for process in reversed(self.pieces.processes):
            await process.stop()
        for group in self.groups:
            for problem in cgroups.remove_group(group):
                log.warning("cgroup clean-up: %s", problem)
        self.groups.clear()
