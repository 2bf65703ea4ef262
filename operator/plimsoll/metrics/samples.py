"""Timestamped readings of one process group, and what a window of them adds up to.

The local sources (`sampler.py`) read a cgroup or /proc every few hundred
milliseconds into a `SampleBuffer`; after a trial, `summarise` slices the buffer to
the trial's window and turns the cumulative counters into means and peaks. Keeping
this pure (no clock, no files) lets the window arithmetic be tested with made-up
samples.

Counters are cumulative, as the kernel keeps them, so a mean over the window is one
subtraction and does not depend on how regularly the sampler ran; only the peak and
the memory mean depend on the sampling interval.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from plimsoll.api.step import ResourceUsage
from plimsoll.metrics.source import Window


@dataclass(frozen=True)
class Sample:
    at: float  # seconds since the epoch, the clock the window is written in
    cpu_seconds: float  # cumulative CPU time of the group
    working_set_bytes: int  # usage minus inactive file cache, as cAdvisor reports it
    periods: int | None = None  # cumulative CFS periods (None: no CFS accounting here)
    throttled: int | None = None  # cumulative throttled CFS periods
    oom_kills: int | None = None  # cumulative (None: the kernel does not report it)
    cpu_wait_seconds: float | None = None  # cumulative runnable-but-waiting time (schedstat, PSI)
    throttled_seconds: float | None = None  # cumulative time the group was throttled
    cpu_wait_source: str | None = None  # where the wait came from: schedstat or cpu.pressure
    # True: the wait already leaves out throttling, thread by thread (schedstat, see
    # `schedstat.WaitOutsideThrottling`); False: wall time, the window subtracts it once.
    cpu_wait_outside_throttling: bool = False


@dataclass(frozen=True)
class Limits:
    cpu_cores: float | None = None  # None: no quota
    cfs_period_ms: float | None = None  # the CFS period the quota is enforced over
    memory_bytes: int | None = None  # None: no limit


class SampleBuffer:
    """A ring of the most recent samples; old ones fall off so a long run stays bounded."""

    def __init__(self, capacity: int = 20_000) -> None:
        self._samples: deque[Sample] = deque(maxlen=capacity)

    def add(self, sample: Sample) -> None:
        self._samples.append(sample)

    def __len__(self) -> int:
        return len(self._samples)

    def between(self, start: float, end: float) -> list[Sample]:
        return [s for s in self._samples if start <= s.at <= end]


def _throttling(usage: ResourceUsage, first: Sample, last: Sample, limits: Limits) -> None:
    """The share of CFS periods throttled between two samples, and how long each stall
    lasted. Without a quota there is no throttling to report: None there means "not
    applicable"."""
    if first.periods is None or last.periods is None or limits.cpu_cores is None:
        return
    periods = last.periods - first.periods
    throttled = (last.throttled or 0) - (first.throttled or 0)
    # No period elapsed means the group never ran under its quota: nothing throttled.
    usage.throttled_ratio = throttled / periods if periods > 0 else 0.0
    usage.cfs_period_ms = limits.cfs_period_ms
    if first.throttled_seconds is not None and last.throttled_seconds is not None:
        stalled = max(last.throttled_seconds - first.throttled_seconds, 0.0)
        usage.throttled_stall_ms = stalled * 1000.0 / throttled if throttled > 0 else 0.0


def summarise(
    samples: Iterable[Sample],
    window: Window,
    *,
    interval: float,
    source: str,
    limits: Limits,
) -> ResourceUsage:
    """The usage over `window` from samples taken every `interval` seconds.

    A sample within one interval outside either edge still counts as that edge's
    reading (the sampler cannot land exactly on it). Too few samples, or a gap wider
    than three intervals (the sampler stalled), make the figures missing with the reason.
    """
    start, end = window.start.timestamp(), window.end.timestamp()
    inside = sorted(
        (s for s in samples if start - interval <= s.at <= end + interval), key=lambda s: s.at
    )
    usage = ResourceUsage(
        source=source, cpu_limit_cores=limits.cpu_cores, memory_limit_bytes=limits.memory_bytes
    )
    if len(inside) < 2:
        usage.missing.append(
            f"{source}: {len(inside)} sample(s) in the {window.seconds:.1f}s window "
            f"(sampling every {interval:g}s); was the sampler running?"
        )
        return usage
    first, last = inside[0], inside[-1]
    problems = _coverage_problems(inside, start, end, interval)
    if problems:
        usage.missing.extend(f"{source}: {p}" for p in problems)
        return usage

    span = last.at - first.at
    if span <= 0:
        usage.missing.append(f"{source}: every sample in the window has the same timestamp")
        return usage
    usage.cpu_mean_cores = max(last.cpu_seconds - first.cpu_seconds, 0.0) / span
    usage.cpu_peak_cores = max(
        max(b.cpu_seconds - a.cpu_seconds, 0.0) / (b.at - a.at)
        for a, b in pairwise(inside)
        if b.at > a.at
    )
    sets = [s.working_set_bytes for s in inside]
    usage.memory_mean_bytes = round(sum(sets) / len(sets))
    usage.memory_max_bytes = max(sets)

    _throttling(usage, first, last, limits)
    _cpu_wait(usage, first, last, span)

    if first.oom_kills is None or last.oom_kills is None:
        usage.missing.append(f"{source}: the kernel does not report OOM kills for this group")
    else:
        usage.oom_kills = last.oom_kills - first.oom_kills
    return usage


def _cpu_wait(usage: ResourceUsage, first: Sample, last: Sample, span: float) -> None:
    """The mean number of the group's threads waiting for a CPU outside throttling.

    Not in `missing` when unreadable: contention is a warning sign, and a step
    must not turn invalid on a kernel without schedstat."""
    if first.cpu_wait_seconds is None or last.cpu_wait_seconds is None:
        return
    waited = max(last.cpu_wait_seconds - first.cpu_wait_seconds, 0.0)
    wall = not last.cpu_wait_outside_throttling
    if wall and first.throttled_seconds is not None and last.throttled_seconds is not None:
        waited = max(waited - max(last.throttled_seconds - first.throttled_seconds, 0.0), 0.0)
    usage.cpu_wait_cores = waited / span
    usage.cpu_wait_source = last.cpu_wait_source


def _coverage_problems(
    inside: list[Sample], start: float, end: float, interval: float
) -> list[str]:
    problems = []
    if inside[0].at > start + interval:
        problems.append(f"no sample in the first {inside[0].at - start:.1f}s of the window")
    if inside[-1].at < end - interval:
        problems.append(f"no sample in the last {end - inside[-1].at:.1f}s of the window")
    widest = max(b.at - a.at for a, b in pairwise(inside))
    if widest > 3 * interval:
        problems.append(f"a {widest:.1f}s gap between samples (sampling every {interval:g}s)")
    return problems
