"""The console side of `plimsoll run`: a live view while it runs, and the report on disk.

`ConsoleSink` is the `ProgressSink` the CLI hands the runner. On a terminal it
draws a `rich.Live` panel: the step under way (level, kind, seconds elapsed) and the
run's progress ("3 of at most 16 steps done, about 6 min left at most",
`plimsoll.decide.run_progress`); what the trial has measured so far, updated as the
generators cut each second's slice (rate achieved, the bar's quantiles over every
operation, errors: `plimsoll.decide.trial_so_far`); the bracket low … high and how it
narrowed; and the latest steps, fitted to the terminal's width as the run's end
prints them (`plimsoll.report.compact_table`). Phases and reasons print above it. Where
the output is not a terminal (CI logs, a pipe) it prints plain lines instead,
one event per line, which read well in a log. Either way it rewrites
report.json and report.html after every step, so an interrupted run keeps
everything it measured and the page shows the steps so far. `--quiet` keeps
only the files and the final sentence.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.text import Text

from plimsoll.api.report import RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import Ceiling, CurrentStep, Phase
from plimsoll.api.step import StepRecord, StepResult, TrialKind, Verdict
from plimsoll.api.timeline import TimelineSlice
from plimsoll.api.units import format_quantile
from plimsoll.decide.run_progress import describe, run_progress
from plimsoll.decide.trial_so_far import SoFar, judged_quantiles, so_far
from plimsoll.report.compact_table import compact_table
from plimsoll.report.files import write_json, write_progress
from plimsoll.report.table import COLUMNS, OPTIONAL_COLUMNS, row

_STYLES = {"pass": "green", "fail": "red", "invalid": "magenta", "noisy": "yellow"}
_PANEL_ROWS = 12  # the latest steps; older ones scroll out of the panel, not out of the report
_PANEL_EDGES = 4  # the panel's border and padding, left and right


def bracket_of(results: list[StepResult], variant: str) -> tuple[int | None, int | None]:
    """(highest pass, lowest fail above it) of one variant so far."""
    mine = [r for r in results if r.variant == variant]
    low = max((r.level for r in mine if r.judgement.verdict is Verdict.PASS), default=None)
    failed = [
        r.level
        for r in mine
        if r.judgement.verdict is Verdict.FAIL and (low is None or r.level > low)
    ]
    return low, min(failed, default=None)


def _side(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def bracket_text(bracket: tuple[int | None, int | None]) -> str:
    return f"{_side(bracket[0])} … {_side(bracket[1])}"


def _console(quiet: bool) -> Console:
    """The terminal's console; in a log or pipe, wide enough that the step table is whole
    (rich would otherwise cut every column to fit 80 characters)."""
    console = Console(stderr=True, quiet=quiet)
    if not console.is_terminal:
        console = Console(stderr=True, quiet=quiet, width=160)
    return console


class ConsoleSink:
    def __init__(
        self,
        test: CapacityTest,
        out: Path,
        *,
        quiet: bool = False,
        console: Console | None = None,
        live: bool | None = None,
    ) -> None:
        self.test = test
        self.out = out
        self.console = console or _console(quiet)
        self.results: list[StepResult] = []
        self.records: list[StepRecord] = []  # the runner's record of each of `results`
        self.report: RunReport | None = None
        self.phase_text = ""
        self.current: CurrentStep | None = None
        self._current_since = 0.0
        self._first_since: float | None = None  # when the run's first step started
        self._last_finished = 0.0  # when the latest step was judged
        self.so_far: SoFar | None = None  # what the trial under way measured so far
        self.brackets: dict[str, list[str]] = {}  # per variant, each distinct bracket in turn
        use_live = self.console.is_terminal and not quiet if live is None else live
        self._live = (
            Live(
                console=self.console,
                get_renderable=self.render,
                refresh_per_second=4,
                transient=True,  # the final table replaces it: no panel left in scrollback
            )
            if use_live
            else None
        )

    # -- the panel ------------------------------------------------------------------

    def _expected_seconds(self, step: CurrentStep) -> float | None:
        trial, search = self.test.spec.trial, self.test.spec.search
        if step.kind is TrialKind.PROBE:
            probe = search.probe_duration
            return None if probe is None else trial.warm_up + probe
        return trial.warm_up + trial.duration

    def _now_line(self) -> Text:
        step = self.current
        if step is None:
            return Text("between steps" if self.results else "starting", style="dim")
        elapsed = time.monotonic() - self._current_since
        expected = self._expected_seconds(step)
        of = f" of ~{expected:.0f} s" if expected else ""
        attempt = f", attempt {step.attempt}" if step.attempt > 1 else ""
        return Text.assemble(
            f"step {step.index}: level ",
            (f"{step.level:,} {self.test.spec.unit}", "bold"),
            f" ({step.kind.value} trial{attempt}, {step.variant}), {elapsed:.0f} s{of}",
        )

    def _progress_line(self) -> Text:
        """Where the run stands: steps done of at most how many, and the time left."""
        now = time.monotonic()
        finished = len(self.results)
        took = self._last_finished - self._first_since if self._first_since and finished else 0.0
        into = now - self._current_since if self.current is not None else 0.0
        progress = run_progress(self.test.spec, finished, took, into)
        return Text(describe(progress), style="cyan")

    def _so_far_line(self) -> Text:
        """The trial's figures so far; the warm-up has none (nothing is measured in it)."""
        figures = self.so_far
        if figures is None:
            return Text("so far: nothing measured yet (warming up)", style="dim")
        quantiles = ", ".join(
            f"{format_quantile(q)} " + ("—" if ms is None else f"{ms:,.1f} ms")
            for q, ms in figures.quantiles_ms.items()
        )
        share = figures.error_share
        noun = "error" if figures.errors == 1 else "errors"
        errors = f"{figures.errors:,} {noun}" + ("" if share is None else f" ({share:.2%})")
        return Text.assemble(
            f"so far ({figures.seconds:.0f} s measured): ",
            (f"{figures.rate:,.1f}/s", "bold"),
            f" achieved, {quantiles} (all operations), {errors}",
        )

    def _bracket_lines(self) -> list[Text]:
        lines = []
        for variant, history in self.brackets.items():
            label = f"[{variant}] " if len(self.brackets) > 1 else ""
            narrowing = " → ".join(history[:-1][-5:])
            lines.append(
                Text.assemble(
                    f"{label}bracket ",
                    (history[-1], "bold cyan"),
                    (f"   (was {narrowing})" if narrowing else "", "dim"),
                )
            )
        return lines

    def _steps_table(self) -> Text:
        """The latest steps as the run's end prints them, fitted inside the panel."""
        latest = self._partial()
        latest.steps, latest.records = latest.steps[-_PANEL_ROWS:], latest.records[-_PANEL_ROWS:]
        lines = compact_table(latest, max(20, self.console.width - _PANEL_EDGES), note=False)
        table = Text(lines[0])
        for line, record in zip(lines[1:], latest.records, strict=True):
            table.append("\n" + line, style=_STYLES.get(record.verdict.value))
        return table

    def render(self) -> RenderableType:
        """The live panel as it stands now (called by rich on every refresh)."""
        parts: list[RenderableType] = [self._progress_line(), self._now_line()]
        if self.current is not None:
            parts.append(self._so_far_line())
        parts += self._bracket_lines()
        if self.results:
            parts += [Text(""), self._steps_table()]
        return Panel(
            Group(*parts),
            title=f"plimsoll run: {self.test.metadata.name}",
            subtitle=self.phase_text,
            expand=False,
        )

    # -- the ProgressSink -------------------------------------------------------------

    async def phase(self, phase: Phase, message: str) -> None:
        self.phase_text = f"{phase.value}: {message}"
        self.console.print(f"[bold]{phase.value}[/bold]: {message}")
        if self._live is not None and phase in (Phase.PROVISIONING, Phase.RUNNING):
            self._live.start()  # idempotent; printing above it keeps working

    async def variant_started(self, name: str) -> None:
        """Nothing to add: the Provisioning line names the variant."""

    async def variant_finished(self, ceiling: Ceiling) -> None:
        """Nothing to add: the report opens with every variant's ceiling."""

    async def step_started(self, step: CurrentStep) -> None:
        self.current, self._current_since = step, time.monotonic()
        self.so_far = None
        if self._first_since is None:
            self._first_since = self._current_since
        if self._live is not None:
            return
        kind = f"{step.kind.value} trial" + (
            f", attempt {step.attempt}" if step.attempt > 1 else ""
        )
        self.console.print(
            f"step {step.index}: level [bold]{step.level:,}[/bold] {self.test.spec.unit} "
            f"({kind}, {step.variant}) …"
        )

    def trial_progress(self, slices: list[TimelineSlice]) -> None:
        """The trial's new slices (`plimsoll.run.progress.LiveFigures`), folded into the
        panel's figures. Not in a log: a line a second would bury the steps."""
        if self._live is not None:
            quantiles = judged_quantiles(self.test.spec.pass_when)
            self.so_far = so_far(slices, quantiles, self.so_far)

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        self.results.append(result)
        self.records.append(record)
        self.current, self.so_far = None, None
        self._last_finished = time.monotonic()
        history = self.brackets.setdefault(record.variant, [])
        now = bracket_text(bracket_of(self.results, record.variant))
        if not history or history[-1] != now:
            history.append(now)
        style = _STYLES.get(record.verdict.value, "white")
        if self._live is None:
            cells = row(result, record).cells
            figures = ", ".join(
                f"{name} {value}"
                for name, value in zip(COLUMNS[4:-1], cells[4:-1], strict=True)
                if not (name in OPTIONAL_COLUMNS and value == "—")
            )
            self.console.print(f"  [{style}]{record.verdict.value.upper()}[/{style}] {figures}")
            for reason in record.reasons:
                self.console.print(f"    {reason}")
            self.console.print(f"  bracket [{now}]")
        elif record.reasons:  # why a step did not pass stays in the scrollback
            verdict = f"[{style}]{record.verdict.value}[/{style}]"
            self.console.print(f"step {record.index} {verdict}: " + "; ".join(record.reasons))
        # Drawing the page takes a second or so (plotly): off the event loop, which still
        # serves the run's exporter and watches its processes.
        await asyncio.to_thread(write_progress, self._partial(), self.out)

    async def equipment_replaced(self, message: str) -> None:
        self.console.print(f"[yellow]{message}[/yellow]")

    def _partial(self) -> RunReport:
        return RunReport(
            test_name=self.test.metadata.name,
            spec=self.test.spec,
            started_at=self.results[0].started_at if self.results else datetime.now(UTC),
            platform="local",
            message="in progress (partial report)",
            steps=list(self.results),
            records=list(self.records),
        )

    async def finished(self, report: RunReport) -> None:
        self.report = report
        if self._live is not None:
            self._live.stop()
        # also when interrupted: the partial report, with why. The steps table that ends the
        # run is `plimsoll.cli.run_end`'s, fitted to the terminal; report.md has them all.
        write_json(report, self.out)
