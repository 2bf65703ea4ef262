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
