"""The target's resources over all its replicas in one step.

Replica 0's figures are `StepResult.target` (the verdict reads them); replicas past
the first are measured beside it under their own roles (`target-1`, `target-2`, ...:
`plimsoll.shared.pod_names.target_replica`). A deployment is paid for in total, so the
report adds them up: mean CPU adds exactly; peak memory adds as the sum of each
replica's own peak, an upper bound of the peak they held together (the peaks need not
fall in the same second).
"""

from __future__ import annotations

from plimsoll.api.step import ResourceUsage, StepResult
from plimsoll.shared.pod_names import target_replica

SOURCE = "sum of replicas"


def replica_usages(result: StepResult) -> list[ResourceUsage]:
    """Every replica's usage that was measured, replica 0 first; the numbering stops at
    the first replica with no figures."""
    usages = [result.target] if result.target is not None else []
    index = 1
    while (usage := result.others.get(target_replica(index))) is not None:
        usages.append(usage)
        index += 1
    return usages


def replica_total(result: StepResult) -> tuple[int, ResourceUsage] | None:
    """(replicas measured, their summed usage), or None for a one-replica step. A sum is
    left out (None) when any replica lacks that figure: a partial sum would read low."""
    usages = replica_usages(result)
    if len(usages) < 2:
        return None
    cpu = [u.cpu_mean_cores for u in usages]
    memory = [u.memory_max_bytes for u in usages]
    limits = [u.cpu_limit_cores for u in usages]
    memory_limits = [u.memory_limit_bytes for u in usages]
    return len(usages), ResourceUsage(
        source=SOURCE,
        cpu_mean_cores=None if None in cpu else sum(c for c in cpu if c is not None),
        memory_max_bytes=None if None in memory else sum(m for m in memory if m is not None),
        cpu_limit_cores=None if None in limits else sum(c for c in limits if c is not None),
        memory_limit_bytes=(
            None if None in memory_limits else sum(m for m in memory_limits if m is not None)
        ),
    )
