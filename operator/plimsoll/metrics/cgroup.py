"""The read side of a pinned process's cgroup: CPU time, CFS throttling, memory, OOM kills.

The local platform creates the cgroup, writes its limits and moves the target into
it; this module only reads, so the platform and the metrics evolve apart. The
platform hands over a `CgroupPaths`:

- cgroup v2: one directory in the unified hierarchy, e.g.
  `/sys/fs/cgroup/plimsoll/<run>/target`, holding `cpu.stat` (usage_usec,
  nr_periods, nr_throttled), `cpu.max`, `memory.current`, `memory.peak`,
  `memory.stat`, `memory.max`, `memory.events`. `cpu_dir == memory_dir`.
- cgroup v1: one directory per controller hierarchy with the same relative name,
  e.g. `/sys/fs/cgroup/cpu/plimsoll-<run>-target` (cpu.stat: nr_periods,
  nr_throttled; cpu.cfs_quota_us, cpu.cfs_period_us),
  `/sys/fs/cgroup/cpuacct/plimsoll-<run>-target` (cpuacct.usage, nanoseconds;
  the same as `cpu_dir` where cpu and cpuacct are co-mounted as `cpu,cpuacct`)
  and `/sys/fs/cgroup/memory/plimsoll-<run>-target` (memory.usage_in_bytes,
  memory.max_usage_in_bytes, memory.stat, memory.limit_in_bytes,
  memory.oom_control). `v1_paths` builds these from the mounts of this machine.

Memory is reported as the working set, usage minus inactive file cache, the figure
cAdvisor exports and the kubelet evicts on, so local and Kubernetes runs compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plimsoll.metrics.samples import Limits, Sample
from plimsoll.metrics.schedstat import (
    WaitOutsideThrottling,
    cgroup_pids,
    pressure_some_seconds,
    thread_run_delays_ns,
)

# cgroup v1 writes "no limit" as the largest page-aligned 64-bit value; anything this
# large is no limit at all.
_NO_LIMIT_V1 = 2**62


class CgroupReadError(RuntimeError):
    """A cgroup file is missing or unreadable; the message names the file."""


@dataclass(frozen=True)
class CgroupPaths:
    version: Literal[1, 2]
    cpu_dir: Path
    memory_dir: Path
    cpuacct_dir: Path | None = None  # v1 only, where cpuacct is mounted apart from cpu

    @property
    def usage_dir(self) -> Path:
        return self.cpuacct_dir or self.cpu_dir


def v1_mounts(mountinfo: str | None = None) -> dict[str, Path]:
    """Controller -> mount point of each v1 hierarchy (`cpu`, `cpuacct`, `memory`, ...)."""
    text = mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
    mounts: dict[str, Path] = {}
    for line in text.splitlines():
        fields = line.split()
        if " - " not in line:
            continue
        after = line.split(" - ", 1)[1].split()
        if len(after) < 3 or after[0] != "cgroup":
            continue
        for option in after[2].split(","):
            if option in {"cpu", "cpuacct", "memory"}:
                mounts[option] = Path(fields[4])
    return mounts


def v1_paths(relative: str, mounts: dict[str, Path] | None = None) -> CgroupPaths:
    """The v1 directories named `relative` (e.g. 'plimsoll-run1-target') under each mount."""
    mounts = mounts if mounts is not None else v1_mounts()
    for controller in ("cpu", "cpuacct", "memory"):
        if controller not in mounts:
            raise CgroupReadError(f"the cgroup v1 {controller!r} controller is not mounted")
    rel = relative.strip("/")
    return CgroupPaths(
        version=1,
        cpu_dir=mounts["cpu"] / rel,
        cpuacct_dir=mounts["cpuacct"] / rel,
        memory_dir=mounts["memory"] / rel,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise CgroupReadError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _keyed(path: Path) -> dict[str, int]:
    """A flat-keyed cgroup file ('key value' per line) as a dict."""
    out: dict[str, int] = {}
    for line in _read(path).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _thread_wait(
    paths: CgroupPaths, waits: WaitOutsideThrottling | None, throttled_ns: int | None
) -> float | None:
    """The schedstat wait outside throttling, per thread (`schedstat`); None without a
    counter to keep it in (a one-off reading has no interval to take throttling from)."""
    if waits is None:
        return None
    pids = cgroup_pids(paths.cpu_dir / "cgroup.procs")
    return waits.add(thread_run_delays_ns(pids, waits.proc), throttled_ns)


def read_sample(
    paths: CgroupPaths, at: float, waits: WaitOutsideThrottling | None = None
) -> Sample:
    """One reading of the group's cumulative counters and current memory. `waits` keeps
    the per-thread wait between readings where the kernel has no pressure file for the
    group; without it such a reading has no CPU wait."""
    if paths.version == 2:
        cpu = _keyed(paths.cpu_dir / "cpu.stat")
        usage = int(_read(paths.memory_dir / "memory.current"))
        inactive = _keyed(paths.memory_dir / "memory.stat").get("inactive_file", 0)
        events = _keyed(paths.memory_dir / "memory.events")
        throttled_usec = cpu.get("throttled_usec")
        wait = pressure_some_seconds(paths.cpu_dir / "cpu.pressure")
        wait_source = "cpu.pressure"
        outside = False  # wall time: the window subtracts the throttled time once
        if wait is None:
            throttled_ns = throttled_usec * 1000 if throttled_usec is not None else None
            wait = _thread_wait(paths, waits, throttled_ns)
            wait_source, outside = "schedstat", True
        return Sample(
            at=at,
            cpu_seconds=cpu["usage_usec"] / 1e6,
            working_set_bytes=max(usage - inactive, 0),
            periods=cpu.get("nr_periods"),
            throttled=cpu.get("nr_throttled"),
            oom_kills=events.get("oom_kill"),
            cpu_wait_seconds=wait,
            throttled_seconds=throttled_usec / 1e6 if throttled_usec is not None else None,
            cpu_wait_source=wait_source if wait is not None else None,
            cpu_wait_outside_throttling=outside,
        )
    cpu = _keyed(paths.cpu_dir / "cpu.stat")
    usage_ns = int(_read(paths.usage_dir / "cpuacct.usage"))
    usage = int(_read(paths.memory_dir / "memory.usage_in_bytes"))
    # The hierarchical figure counts child groups too, as usage_in_bytes does.
    stat = _keyed(paths.memory_dir / "memory.stat")
    inactive = stat.get("total_inactive_file", stat.get("inactive_file", 0))
    oom = _keyed(paths.memory_dir / "memory.oom_control")
    # cgroup v1 has no pressure file: the run-queue wait of the group's threads instead.
    throttled_ns = cpu.get("throttled_time")
    wait = _thread_wait(paths, waits, throttled_ns)
    return Sample(
        at=at,
        cpu_seconds=usage_ns / 1e9,
        working_set_bytes=max(usage - inactive, 0),
        periods=cpu.get("nr_periods"),
        throttled=cpu.get("nr_throttled"),
        oom_kills=oom.get("oom_kill"),  # absent before Linux 4.13
        cpu_wait_seconds=wait,
        throttled_seconds=throttled_ns / 1e9 if throttled_ns is not None else None,
        cpu_wait_source="schedstat" if wait is not None else None,
        cpu_wait_outside_throttling=True,
    )


def read_limits(paths: CgroupPaths) -> Limits:
    period_us, quota_us = cpu_period_quota_us(paths)
    return Limits(
        cpu_cores=None if quota_us is None else quota_us / period_us,
        cfs_period_ms=period_us / 1000.0,
        memory_bytes=memory_limit_bytes(paths),
    )


def memory_limit_bytes(paths: CgroupPaths) -> int | None:
    if paths.version == 2:
        memory = _read(paths.memory_dir / "memory.max").strip()
        return None if memory == "max" else int(memory)
    limit = int(_read(paths.memory_dir / "memory.limit_in_bytes"))
    return None if limit >= _NO_LIMIT_V1 else limit


def cpu_period_quota_us(paths: CgroupPaths) -> tuple[int, int | None]:
    """(period, quota) in microseconds as cAdvisor exports them; quota None when unlimited."""
    if paths.version == 2:
        quota, period = _read(paths.cpu_dir / "cpu.max").split()
        return int(period), None if quota == "max" else int(quota)
    quota_us = int(_read(paths.cpu_dir / "cpu.cfs_quota_us"))
    period_us = int(_read(paths.cpu_dir / "cpu.cfs_period_us"))
    return period_us, None if quota_us < 0 else quota_us
