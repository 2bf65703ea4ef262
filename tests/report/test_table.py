"""The step table's columns for modeled users: added latency and page views."""

from __future__ import annotations

from plimsoll.api.step import Judgement, ResourceUsage, StepResult, Verdict
from plimsoll.api.trial import OperationResult, Outcomes, TrialResult, TrialState
from plimsoll.decide.step_summary import record_of
from plimsoll.report.table import COLUMNS, beside_rows, row
from plimsoll.shared import histogram
from tests.reportfixtures import T0


def encoded(micros: list[int]) -> str:
    h = histogram.new_histogram()
    for value in micros:
        h.record_value(value)
    return histogram.encode(h)


def step(client: TrialResult) -> StepResult:
    return StepResult(
        index=1,
        level=50,
        started_at=T0,
        ended_at=T0,
        duration=2.0,
        client=client,
        judgement=Judgement(verdict=Verdict.PASS),
    )


def cell(result: StepResult, column: str) -> str:
    return row(result, record_of(result)).cells[COLUMNS.index(column)]


def test_added_latency_and_page_views_are_shown_per_step() -> None:
    calls = OperationResult(
        latency=encoded([50_000] * 99 + [80_000]),
        added=encoded([1_000] * 99 + [9_000]),  # 1 ms, one call at 9 ms
        outcomes=Outcomes(ok=100),
    )
    pages = OperationResult(
        latency=encoded([10_000] * 5), added=encoded([2_000] * 5), outcomes=Outcomes(ok=5)
    )
    client = TrialResult(
        id="t",
        state=TrialState.DONE,
        level=50,
        operations={"tool-call": calls, "page_view": pages},
        page_views=5,
        measured_seconds=2.0,
    )
    result = step(client)
    # p99 over both operations' added latency: 105 samples, the 104th is the 2 ms ones'.
    assert float(cell(result, "added p99 ms")) == 2.0
    assert cell(result, "page views") == "5"


def test_without_server_timing_or_page_views_the_cells_say_so() -> None:
    plain = OperationResult(latency=encoded([1_000]), outcomes=Outcomes(ok=1))
    client = TrialResult(id="t", state=TrialState.DONE, level=1, operations={"get": plain})
    result = step(client)
    assert cell(result, "added p99 ms") == "—"
    assert cell(result, "page views") == "—"


def test_each_step_shows_how_many_generator_processes_sent_it() -> None:
    client = TrialResult(
        id="t",
        state=TrialState.DONE,
        level=50,
        generators=3,
        cpu_seconds=1.5,
        peak_cpu_fraction=0.3,
        measured_seconds=2.0,
    )
    result = step(client)
    record = record_of(result)
    assert (record.generators, record.generator_cores, record.generator_peak_cpu) == (3, 0.75, 0.3)
    assert cell(result, "generators") == "3"


def test_the_replicas_total_is_the_last_row_beside_the_target() -> None:
    def usage(cpu: float, mib: int) -> ResourceUsage:
        return ResourceUsage(source="cgroup", cpu_mean_cores=cpu, memory_max_bytes=mib * 2**20)

    result = step(TrialResult(id="t", state=TrialState.DONE, level=1)).model_copy(
        update={
            "target": usage(0.2, 40),
            "others": {"mock-0": usage(0.5, 90), "target-1": usage(0.15, 38)},
        }
    )
    names = [cells[3:] for cells in beside_rows(result)]
    assert names == [
        ["mock-0", "cgroup", "0.50", "90 MiB"],
        ["target-1", "cgroup", "0.15", "38 MiB"],
        ["target, all 2 replicas", "sum of replicas", "0.35", "78 MiB"],
    ]
