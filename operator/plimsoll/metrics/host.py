"""The whole host's CPU time, from /proc/stat: what every process on it used together.

The local platform samples it beside the target and its equipment (`Sampler.for_host`,
role `host`), so a step can tell the CPU other programs took (the host's total less
what the test's own pieces used) from the target's own threads waiting for each other
or for its load generators (`plimsoll.decide.contention`). Only user, nice, system and
steal count: interrupt time is the kernel serving the test's own loopback traffic as
much as anyone's, and is not a program that could have held the target's CPU.
"""

from __future__ import annotations

import os
from pathlib import Path

from plimsoll.metrics.cgroup import CgroupReadError
from plimsoll.metrics.samples import Sample

_TICKS = os.sysconf("SC_CLK_TCK")


def read_host_sample(at: float, stat: Path = Path("/proc/stat")) -> Sample:
    """The host's cumulative busy CPU time (all CPUs) as a sample; no memory figure."""
    try:
        first = stat.read_text().splitlines()[0].split()
    except (OSError, IndexError) as exc:
        raise CgroupReadError(f"cannot read {stat}: {exc}") from exc
    if first[0] != "cpu" or len(first) < 9:
        raise CgroupReadError(f"{stat} has no aggregate 'cpu' line")
    user, nice, system, steal = (int(first[i]) for i in (1, 2, 3, 8))
    return Sample(at=at, cpu_seconds=(user + nice + system + steal) / _TICKS, working_set_bytes=0)
