"""The console side of `plimsoll run`: a live view while it runs, and the report on disk.

`ConsoleSink` is the `ProgressSink` the CLI hands the runner: it prints each
phase, the current step, each step's verdict and figures and the bracket as it
narrows (rich), and rewrites report.json after every step so an interrupted
run keeps everything it measured. `--quiet` keeps only the files and the
final sentence.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from plimsoll.api.report import RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import CurrentStep, Phase
from plimsoll.api.step import StepRecord, StepResult, Verdict
from plimsoll.report.files import write_json
from plimsoll.report.table import COLUMNS, row

_STYLES = {"pass": "green", "fail": "red", "invalid": "magenta", "noisy": "yellow"}


class ConsoleSink:
    def __init__(self, test: CapacityTest, out: Path, *, quiet: bool = False) -> None:
        self.test = test
        self.out = out
        self.console = Console(stderr=True, quiet=quiet)
        self.results: list[StepResult] = []
        self.report: RunReport | None = None

    def _bracket(self, variant: str) -> str:
        mine = [r for r in self.results if r.variant == variant]
        passed = [r.level for r in mine if r.judgement.verdict is Verdict.PASS]
        low = max(passed, default=None)
        failed = [
            r.level
            for r in mine
            if r.judgement.verdict is Verdict.FAIL and (low is None or r.level > low)
        ]
        high = min(failed, default=None)
        return f"bracket [{low if low is not None else '—'} … {high if high is not None else '—'}]"

    async def phase(self, phase: Phase, message: str) -> None:
        self.console.print(f"[bold]{phase.value}[/bold]: {message}")

    async def step_started(self, step: CurrentStep) -> None:
        kind = f"{step.kind.value} trial" + (
            f", attempt {step.attempt}" if step.attempt > 1 else ""
        )
        self.console.print(
            f"step {step.index}: level [bold]{step.level:,}[/bold] {self.test.spec.unit} "
            f"({kind}, {step.variant}) …"
        )

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        self.results.append(result)
        cells = row(result).cells
        figures = ", ".join(
            f"{name} {value}" for name, value in zip(COLUMNS[4:12], cells[4:12], strict=True)
        )
        style = _STYLES.get(record.verdict.value, "white")
        self.console.print(f"  [{style}]{record.verdict.value.upper()}[/{style}] {figures}")
        for reason in record.reasons:
            self.console.print(f"    {reason}")
        self.console.print(f"  {self._bracket(record.variant)}")
        write_json(self._partial(), self.out)

    def _partial(self) -> RunReport:
        return RunReport(
            test_name=self.test.metadata.name,
            spec=self.test.spec,
            started_at=self.results[0].started_at if self.results else datetime.now(UTC),
            platform="local",
            message="in progress (partial report)",
            steps=list(self.results),
        )

    async def finished(self, report: RunReport) -> None:
        self.report = report
        write_json(report, self.out)  # also when interrupted: the partial report, with why
        table = Table(*COLUMNS, title="Steps")
        for result in report.steps:
            line = row(result)
            table.add_row(*line.cells, style=_STYLES.get(line.verdict))
        self.console.print(table)
