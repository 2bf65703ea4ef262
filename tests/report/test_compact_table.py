"""The steps table `plimsoll run` ends with, at 80, 100 and 140 columns.

A run of the LLM-proxy kind (two operations, a bar on the chat operation's time to
first token at p95 and on every operation's p99, several variants) printed through
`plimsoll.cli.run_end.finish` with COLUMNS set, as a terminal of that width would:
no line is longer than the width, every verdict is there whole, columns drop by
priority (the judged figures last of the figures), and the judged figure is the one
the bar judged (chat's TTFT at p95), not the merged total.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plimsoll.api.report import RunReport
from plimsoll.api.spec import LatencyBound
from plimsoll.api.step import StepResult, TrialKind, Verdict
from plimsoll.api.trial import OperationResult, Outcomes, TrialResult, TrialState
from plimsoll.cli.run_end import Gates, finish
from plimsoll.decide.step_summary import record_of
from plimsoll.report.compact_table import columns, fit
from plimsoll.shared import histogram
from tests.reportfixtures import Run, ladder, make_report


def _encoded(micros: int, count: int = 100) -> str:
    h = histogram.new_histogram()
    h.record_value(micros, count)
    return histogram.encode(h)


def _client(level: int) -> TrialResult:
    chat = OperationResult(
        latency=_encoded(2_300_000 + level * 100),  # a long answer: ~2.3 s in total
        ttft=_encoded(400_000 + level * 2_000),  # its first token: what the bar judges
        outcomes=Outcomes(ok=100),
    )
    models = OperationResult(latency=_encoded(5_000), outcomes=Outcomes(ok=100))
    return TrialResult(
        id="t",
        state=TrialState.DONE,
        level=level,
        operations={"chat": chat, "models": models},
        measured_seconds=20.0,
        sent=200,
    )


def llm_run() -> RunReport:
    report = make_report(
        {
            "default": Run(160, 320, ladder(160, 320, 0.004)),
            "long-context-cache": Run(100, 200, ladder(100, 200, 0.006)),
        },
        name="llm-proxy",
    )
    report.spec.pass_when.latency = [
        LatencyBound(operation="chat", quantile=0.95, below=0.9, metric="ttft"),
        LatencyBound(quantile=0.99, below=5.0),
    ]
    steps: list[StepResult] = []
    for step in report.steps:
        failed = step.judgement.verdict is Verdict.FAIL
        update = {"client": _client(step.level)}
        if failed:  # a probe, and a marginal verdict's longer word, must stay whole too
            update["kind"] = TrialKind.PROBE
            update["judgement"] = step.judgement.model_copy(update={"verdict": Verdict.MARGINAL})
        steps.append(step.model_copy(update=update))
    report.steps, report.records = steps, [record_of(s) for s in steps]
    return report


@pytest.mark.parametrize("width", [80, 100, 140])
def test_the_summary_fits_the_terminal_and_keeps_every_verdict_whole(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.chdir(tmp_path)  # the default --out is relative too: plimsoll-out/NAME-STAMP
    report = llm_run()
    report.summary = [
        "0.5 CPU / 96 MiB sustains 160 requests per second; cpu limited it, 80 MiB under the "
        "limit with 2% CPU idle, confirmed by a trial with CPU doubled (range 160 … 320)."
    ]
    assert finish(report, Path("plimsoll-out") / "llm-proxy-20261206-120000", Gates()) == 0
    out = capsys.readouterr().out.splitlines()
    too_long = [line for line in out if len(line) > width]
    assert not too_long, "\n".join(too_long)
    header = next(i for i, line in enumerate(out) if {"level", "verdict"} <= set(line.split()))
    rows = out[header + 1 : header + 1 + len(report.steps)]
    for line, record in zip(rows, report.records, strict=True):
        assert f" {record.verdict.value} " in f"{line} ", line
        assert record.variant in line  # several variants: a row names its own
    # The bar's figure, named as the bar names it, and CPU and memory, fit from 80 on.
    for heading in ("level", "verdict", "variant", "chat p95 ttft ms", "CPU", "memory"):
        assert heading in out[header]
    if width >= 140:
        assert "kind" in out[header]
        assert "probe" in "\n".join(rows)
    assert "…" not in "\n".join([out[header], *rows])  # no cell cut short


def test_columns_drop_by_priority_and_say_so() -> None:
    report = llm_run()
    headings = [c.heading for c in columns(report)]
    assert headings == [
        "level",
        "verdict",
        "variant",
        "chat p95 ttft ms",
        "p99 ms",
        "CPU",
        "memory",
        "errors",
        "achieved/s",
        "kind",
        "#",
    ]
    kept = {w: [c.heading for c in fit(columns(report), w)] for w in (10, 60, 80, 140)}
    assert kept[10] == ["level", "verdict"]  # always, however narrow
    for narrow, wide in ((10, 60), (60, 80), (80, 140)):
        assert kept[narrow] == kept[wide][: len(kept[narrow])]  # a prefix: by priority
    assert kept[140] == headings  # wide enough: everything
    assert kept[60] == headings[:4]  # what the bar judged goes before CPU and memory


def test_the_judged_figure_is_the_bars_not_the_merged_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "140")
    report = llm_run()
    finish(report, tmp_path, Gates())
    out = capsys.readouterr().out.splitlines()
    header = next(line for line in out if line.lstrip().startswith("#"))
    first = out[out.index(header) + 1]
    # level 25: chat's TTFT is ~450 ms (400 + 25 x 2); total latency is ~2.3 s
    at = header.index("chat p95 ttft ms") + len("chat p95 ttft ms")  # right-aligned figures
    ttft = float(first[:at].split()[-1].replace(",", ""))
    assert 440 <= ttft <= 460
    assert "report.md" in "\n".join(out)


def test_in_a_pipe_the_sentence_stays_whole_and_the_table_fits_80(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No COLUMNS and no terminal (a CI log, `| grep`): a script greps the sentence whole,
    and the table keeps to 80 columns, which any log viewer shows."""
    monkeypatch.delenv("COLUMNS", raising=False)
    report = llm_run()
    sentence = (
        "0.5 CPU / 96 MiB sustains 160 requests per second; cpu limited it, 80 MiB under the "
        "limit with 2% CPU idle, confirmed by a trial with CPU doubled (range 160 … 320)."
    )
    report.summary = [sentence]
    finish(report, tmp_path, Gates())
    out = capsys.readouterr().out.splitlines()
    assert sentence in out
    header = next(i for i, line in enumerate(out) if {"level", "verdict"} <= set(line.split()))
    table = out[header : header + 1 + len(report.steps)]
    assert max(len(line) for line in table) <= 80
