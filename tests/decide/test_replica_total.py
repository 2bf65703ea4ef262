"""The target's resources added up over its replicas."""

from __future__ import annotations

import pytest

from plimsoll.api.step import Judgement, ResourceUsage, StepResult, Verdict
from plimsoll.decide.replica_total import replica_total
from tests.reportfixtures import T0

MIB = 2**20


def usage(cpu: float | None, memory_mib: int) -> ResourceUsage:
    return ResourceUsage(
        source="cgroup",
        cpu_mean_cores=cpu,
        memory_max_bytes=memory_mib * MIB,
        cpu_limit_cores=0.25,
        memory_limit_bytes=128 * MIB,
    )


def step(target: ResourceUsage | None, others: dict[str, ResourceUsage]) -> StepResult:
    return StepResult(
        index=2,
        level=35,
        started_at=T0,
        ended_at=T0,
        duration=30.0,
        target=target,
        others=others,
        judgement=Judgement(verdict=Verdict.PASS),
    )


def test_three_replicas_add_up_and_the_mock_is_not_one_of_them() -> None:
    result = step(
        usage(0.20, 40),
        {
            "target-1": usage(0.15, 38),
            "target-2": usage(0.10, 36),
            "mock-0": usage(0.50, 90),
        },
    )
    total = replica_total(result)
    assert total is not None
    replicas, summed = total
    assert replicas == 3
    assert summed.cpu_mean_cores == pytest.approx(0.45)
    assert summed.memory_max_bytes == 114 * MIB
    assert summed.cpu_limit_cores == 0.75
    assert summed.memory_limit_bytes == 384 * MIB


def test_one_replica_has_no_total() -> None:
    assert replica_total(step(usage(0.2, 40), {"mock-0": usage(0.5, 90)})) is None


def test_a_replica_without_a_cpu_figure_leaves_the_cpu_sum_out() -> None:
    result = step(usage(0.2, 40), {"target-1": usage(None, 38)})
    total = replica_total(result)
    assert total is not None
    assert total[1].cpu_mean_cores is None
    assert total[1].memory_max_bytes == 78 * MIB
