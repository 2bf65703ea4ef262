"""The operator's /metrics text: runs by phase, steps by verdict, the step-duration histogram."""

from __future__ import annotations

from plimsoll.api.status import Phase
from plimsoll.api.step import Verdict
from plimsoll.controller.operator_metrics import OperatorMetrics


def test_render_counts_runs_steps_and_durations() -> None:
    metrics = OperatorMetrics()
    metrics.set_phase("a", Phase.RUNNING)
    metrics.set_phase("b", Phase.RUNNING)
    metrics.set_phase("c", Phase.SUCCEEDED)
    metrics.set_phase("c", None)  # deleted
    metrics.step(Verdict.PASS, 3.0)
    metrics.step(Verdict.FAIL, 70.0)
    text = metrics.render()
    assert 'plimsoll_runs{phase="Running"} 2' in text
    assert 'plimsoll_runs{phase="Succeeded"} 0' in text
    assert 'plimsoll_steps_total{verdict="pass"} 1' in text
    assert 'plimsoll_step_duration_seconds_bucket{le="5.0"} 1' in text
    assert 'plimsoll_step_duration_seconds_bucket{le="+Inf"} 2' in text
    assert "plimsoll_step_duration_seconds_sum 73.0" in text


def test_a_deployments_contract_is_a_gauge_per_deployment() -> None:
    from datetime import UTC, datetime

    from plimsoll.api.contract import CapacityContract, ContractState, ProvenCapacity
    from plimsoll.api.step import LimitedBy

    proof = ProvenCapacity(
        image="shop:1.0",
        ceiling=300,
        unit="users",
        cpu="500m",
        memory="256Mi",
        limited_by=LimitedBy.MEMORY,
        run_id="r1",
        capacity_test="team/shop",
        at=datetime(2026, 12, 7, tzinfo=UTC),
    )
    metrics = OperatorMetrics()
    results = metrics.results
    results.record_contract(
        "team", "shop", CapacityContract(state=ContractState.PROVEN, proven=proof)
    )
    results.record_contract("team", "cart", CapacityContract(state=ContractState.UNPROVEN))
    text = metrics.render()
    assert 'plimsoll_contract_proven{namespace="team",deployment="shop"} 1' in text
    assert 'plimsoll_contract_proven{namespace="team",deployment="cart"} 0' in text
    assert (
        'plimsoll_contract_ceiling{namespace="team",deployment="shop",unit="users",'
        'limited_by="memory"} 300' in text
    )
    assert 'plimsoll_contract_ceiling{namespace="team",deployment="cart"' not in text
