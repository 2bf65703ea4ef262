"""Small report.json fixtures: runs with known ceilings, steps and costs, built in code.

Shared by the comparison tests (decide), the report rendering tests and the
`plimsoll compare` CLI tests, so each states only the figures it is about.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from plimsoll.api.faults import FaultOutcome
from plimsoll.api.gate import Changepoint
from plimsoll.api.report import Outcome, RunReport, UnitCost
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import Ceiling
from plimsoll.api.step import Judgement, LimitedBy, ResourceUsage, StepResult, Verdict
from plimsoll.api.trial import OperationResult, Outcomes, TrialResult, TrialState
from plimsoll.decide.step_summary import record_of
from plimsoll.shared import histogram
from plimsoll.shared.histogram import encode, new_histogram, record_seconds
from tests.timelinefixtures import known_timeline

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@dataclass
class Run:
    """One variant's outcome: the ceiling, its range, and the full-length steps behind it."""

    level: int | None
    high: int | None
    steps: list[tuple[int, Verdict, float]] = field(default_factory=list)  # level, verdict, cpu
    value: float | None = None
    cpu_per_request_ms: float | None = None
    limited_by: LimitedBy = LimitedBy.CPU


def _spec(variants: dict[str, Run], value_unit: str) -> dict[str, Any]:
    listed = [
        {
            "name": name,
            **({"value": run.value, "valueUnit": value_unit} if run.value is not None else {}),
        }
        for name, run in variants.items()
        if name != "default"
    ]
    return {
        "target": {"command": ["./server"], "resources": {"cpu": "1", "memory": "256Mi"}},
        "workload": {"mix": [{"name": "get", "path": "/"}]},
        "variants": listed,
    }


def _step(index: int, variant: str, level: int, verdict: Verdict, cpu: float) -> StepResult:
    start = T0 + timedelta(seconds=10 * index)
    return StepResult(
        index=index,
        level=level,
        variant=variant,
        started_at=start,
        ended_at=start + timedelta(seconds=2),
        duration=2.0,
        target=ResourceUsage(source="cgroup", cpu_mean_cores=cpu, memory_max_bytes=50 * 2**20),
        judgement=Judgement(verdict=verdict),
    )


def make_report(variants: dict[str, Run], name: str = "fixture", value_unit: str = "") -> RunReport:
    """A finished run: `variants` maps a variant's name ('default' for none) to its outcome."""
    test = CapacityTest.model_validate(
        {"metadata": {"name": name}, "spec": _spec(variants, value_unit)}
    )
    report = RunReport(
        test_name=name, spec=test.spec, started_at=T0, platform="local", outcome=Outcome.SUCCEEDED
    )
    for variant, run in variants.items():
        for level, verdict, cpu in run.steps:
            step = _step(len(report.steps), variant, level, verdict, cpu)
            report.add_step(step, record_of(step))
        report.ceilings.append(
            Ceiling(
                level=run.level,
                unit="rps",
                low=run.level,
                high=run.high,
                spread=[run.level] * 2 if run.level is not None else [],
                limited_by=run.limited_by,
                complete=True,
                variant=variant,
            )
        )
        if run.cpu_per_request_ms is not None:
            report.unit_costs.append(
                UnitCost(
                    variant=variant,
                    name="CPU per request",
                    value=run.cpu_per_request_ms,
                    unit="CPU-ms",
                )
            )
    report.ceiling = report.ceilings[0]
    return report


def ladder(ceiling: int, high: int, cpu_per_request: float) -> list[tuple[int, Verdict, float]]:
    """Steps of a doubling search from 25: passes up to `ceiling`, a failure at `high`."""
    steps = []
    level = 25
    while level < ceiling:
        steps.append((level, Verdict.PASS, level * cpu_per_request))
        level *= 2
    steps.append((high, Verdict.FAIL, high * cpu_per_request))
    steps += [(ceiling, Verdict.PASS, ceiling * cpu_per_request)] * 2
    return steps


def save(report: RunReport, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.json"
    path.write_text(report.model_dump_json(by_alias=True, indent=2))
    return path


def _histogram(ms: float, count: int = 200) -> str:
    recorded = histogram.new_histogram()
    for _ in range(count):
        histogram.record_seconds(recorded, ms / 1000)
    return histogram.encode(recorded)


# The LLM proxy's shape: a streamed chat whose answers last ~2.3 s while its first token
# comes far sooner, and a quick model listing; the bar judges chat's TTFT at p95 and the
# listing's total at p99. Merged across operations, every step would sit near 2,300 ms.
LLM_LEVELS = [20, 40, 80, 160, 320]
LLM_TTFT_MS = [300.0, 350.0, 450.0, 700.0, 1200.0]
LLM_TOTAL_MS = 2300.0
LLM_MODELS_MS = [10.0, 10.0, 12.0, 15.0, 60.0]


def llm_proxy_report() -> RunReport:
    """A finished run of five steps, the last failing its TTFT bar, with timelines (one step
    sent to two replicas, one with a fault) and the target's resources."""
    test = CapacityTest.model_validate(
        {
            "metadata": {"name": "llm-proxy"},
            "spec": {
                "target": {
                    "command": ["./proxy"],
                    "resources": {"cpu": "0.5", "memory": "96Mi"},
                },
                "workload": {
                    "model": "rate",
                    "mix": [
                        {"name": "chat", "path": "/v1/chat/completions", "method": "POST"},
                        {"name": "models", "path": "/v1/models"},
                    ],
                },
                "passWhen": {
                    "latency": [
                        {
                            "operation": "chat",
                            "metric": "ttft",
                            "quantile": "p95",
                            "below": "900ms",
                        },
                        {"operation": "models", "quantile": "p99", "below": "100ms"},
                    ]
                },
            },
        }
    )
    report = RunReport(
        test_name="llm-proxy",
        spec=test.spec,
        started_at=T0,
        ended_at=T0 + timedelta(minutes=3),
        platform="local",
        pinned=True,
        outcome=Outcome.SUCCEEDED,
    )
    for index, level in enumerate(LLM_LEVELS):
        ttft = LLM_TTFT_MS[index]
        failed = ttft > 900
        slices = known_timeline([LLM_TOTAL_MS * 0.99] * 6, [0, 0, 3 if failed else 0, 0, 0, 0])
        if index == 1:  # two replicas shared this step's load
            slices = [
                s.model_copy(update={"replica_sent": [s.sent // 2, s.sent - s.sent // 2]})
                for s in slices
            ]
        client = TrialResult(
            id=f"t{index}",
            state=TrialState.DONE,
            level=level,
            operations={
                "chat": OperationResult(
                    latency=_histogram(LLM_TOTAL_MS),
                    ttft=_histogram(ttft),
                    outcomes=Outcomes(ok=200),
                ),
                "models": OperationResult(
                    latency=_histogram(LLM_MODELS_MS[index]), outcomes=Outcomes(ok=200)
                ),
            },
            sent=400,
            measured_seconds=6.0,
            timeline=slices,
        )
        start = T0 + timedelta(seconds=30 * index)
        faults = (
            [
                FaultOutcome(
                    fault="1 replica killed at 2 s",
                    at=2.0,
                    taken=["replica 1"],
                    caused_errors=0,
                    recovery_s=1.0,
                    held=True,
                )
            ]
            if index == 2
            else []
        )
        reasons = [f"p95 ttft latency of chat {ttft:g} ms > 900 ms"] if failed else []
        step = StepResult(
            index=index,
            level=level,
            started_at=start,
            ended_at=start + timedelta(seconds=6),
            duration=6.0,
            client=client,
            target=ResourceUsage(
                source="cgroup",
                cpu_mean_cores=0.08 * (index + 1),
                memory_max_bytes=(40 + 8 * index) * 2**20,
            ),
            judgement=Judgement(verdict=Verdict.FAIL if failed else Verdict.PASS, reasons=reasons),
            faults=faults,
        )
        report.add_step(step, record_of(step))
    report.ceiling = Ceiling(
        level=160,
        unit="rps",
        low=160,
        high=320,
        spread=[160],
        limited_by=LimitedBy.NEITHER,
        complete=True,
        basis="passed 1 of 1; 320 failed 1 of 1",
    )
    report.ceilings = [report.ceiling]
    report.summary = [
        "0.5 CPU / 96 MiB sustains 160 requests per second; neither CPU nor memory limited it."
    ]
    return report


# A change the gate's changepoint method found in a test's history (as report.changepoints).
CHANGE = Changepoint(
    run_id="1a2b3c4d",
    index=12,
    runs=15,
    image="api:2.7.0",
    before=400.0,
    after=300.0,
    change=-0.25,
    margin=0.03,
    pvalue=0.0,
    sentence="ceiling −25% ± 3% at run 1a2b3c4d (13 of 15), image api:2.7.0",
)


def encoded_seconds(*seconds: float) -> str:
    """An encoded latency histogram holding these durations (seconds)."""
    histogram = new_histogram()
    for value in seconds:
        record_seconds(histogram, value)
    return encode(histogram)
