"""report.html as text: each latency bar drawn against exactly what it judges, one file with
plotly.js once and nothing fetched, every step column and reason, the run's other parts
where it has them, and the files `plimsoll run` writes. In a real browser:
test_html_browser.py."""

from __future__ import annotations

import io
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from plotly.offline import get_plotlyjs
from rich.console import Console

from plimsoll.api.sizing import SizingSpec
from plimsoll.cli.run_end import Gates, finish
from plimsoll.decide.sizing import plan_deployment
from plimsoll.decide.sizing_costs import resolve
from plimsoll.report.comparison import compare_variants
from plimsoll.report.files import read_report, write_progress, write_report
from plimsoll.report.html import PlotlyMissingError, render_html
from plimsoll.report.html_chart import BROKEN, HELD, bound_chart
from plimsoll.report.live import ConsoleSink
from plimsoll.report.table import COLUMNS
from tests.localrun import short_cpu_test
from tests.report.test_shapes_report import table as shape_table
from tests.reportfixtures import (
    LLM_MODELS_MS,
    LLM_TOTAL_MS,
    LLM_TTFT_MS,
    Run,
    ladder,
    llm_proxy_report,
    make_report,
)


class _Page(HTMLParser):
    """What the page holds: element ids, the steps table's cells, external references."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.external: list[str] = []
        self.script_sources: list[str] = []
        self.steps: list[list[str]] = []
        self._in_steps = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(str(found["id"]))
        for name in ("src", "href"):
            value = found.get(name) or ""
            if value and not value.startswith("#"):
                self.external.append(value)
        if tag == "script" and found.get("src"):
            self.script_sources.append(str(found["src"]))
        if tag == "table" and found.get("id") == "steps-table":
            self._in_steps = True
        if self._in_steps and tag == "tr":
            self.steps.append([])
        if self._in_steps and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._in_steps and tag in ("td", "th") and self._cell is not None:
            self.steps[-1].append("".join(self._cell).strip())
            self._cell = None
        if tag == "table":
            self._in_steps = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parsed(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def test_each_bar_is_drawn_against_the_operation_metric_and_quantile_it_judges() -> None:
    report = llm_proxy_report()
    # The step record merges every operation's total latency: ~2,300 ms at every level.
    assert all(abs((r.p95_ms or 0) - LLM_TOTAL_MS) < 0.01 * LLM_TOTAL_MS for r in report.records)
    ttft, models = (bound_chart(report, i, b) for i, b in enumerate(report.spec.pass_when.latency))
    assert ttft is not None
    assert models is not None
    measured, bar = ttft.figure.data
    assert list(measured.y) == pytest.approx(LLM_TTFT_MS, rel=0.01)  # chat's TTFT p95, not total
    assert list(bar.y) == [900.0, 900.0]
    assert bar.name == "bar: p95 ttft latency of chat < 900 ms"
    assert list(measured.marker.color) == [HELD] * 4 + [BROKEN]  # 1,200 ms broke the bar
    assert list(models.figure.data[0].y) == pytest.approx(LLM_MODELS_MS, rel=0.01)
    assert list(models.figure.data[0].marker.color) == [HELD] * 5  # 60 ms held, step failed
    assert models.figure.data[0].marker.symbol[-1] == "x"  # ... and the step's verdict shows


def test_the_page_is_one_file_with_plotly_once_and_nothing_to_fetch() -> None:
    page = render_html(llm_proxy_report())
    parsed = _parsed(page)
    assert parsed.script_sources == []
    assert parsed.external == []  # every link is to a section of the page itself
    banner = get_plotlyjs()[:200]
    assert page.count(banner) == 1
    charts = [i for i in parsed.ids if i.startswith("chart-")]
    assert charts == [
        "chart-bar-0",
        "chart-bar-1",
        "chart-operations",
        "chart-resources",
        *(f"chart-timeline-step-{n}" for n in range(5)),
    ]


def test_the_steps_table_has_every_column_and_the_reasons_escaped() -> None:
    report = llm_proxy_report()
    report.steps[4].judgement.reasons.append("<script>alert(1)</script>")
    report.records[4].reasons.append("<script>alert(1)</script>")
    page = render_html(report)
    rows = _parsed(page).steps
    assert rows[0] == [*COLUMNS, "reasons"]
    assert [row[0] for row in rows[1:]] == ["0", "1", "2", "3", "4"]
    assert rows[5][COLUMNS.index("verdict")] == "fail"
    assert rows[5][-1] == "p95 ttft latency of chat 1200 ms > 900 ms; <script>alert(1)</script>"
    assert "<script>alert(1)</script>" not in page  # shown as text, never run


def test_variants_shapes_sizing_and_the_spec_where_the_run_has_them() -> None:
    report = make_report(
        {
            "default": Run(400, 440, ladder(400, 440, 0.002)),
            "pg": Run(300, 330, ladder(300, 330, 0.003)),
        }
    )
    report.comparison = compare_variants(report, report.unit_costs)
    report.shapes = shape_table()
    report.spec.sizing = SizingSpec(peak=20000, growth=2, zones=3)
    report.sizing = plan_deployment(
        resolve(report.spec.sizing, report, {}, costs=report.unit_costs)
    )
    page = render_html(report)
    ids = _parsed(page).ids
    for section in ("variants", "shapes", "sizing", "spec", "chart-ceilings", "chart-shapes"):
        assert section in ids
    assert "2 CPU / 1Gi" in page
    assert f"{report.sizing.pods} pods, {report.sizing.pods_per_zone} per zone" in page
    assert "command:\n  - ./server" in page  # the spec as run, as YAML
    # A run without them shows none of these sections.
    plain = _parsed(render_html(make_report({"default": Run(400, 440, ladder(400, 440, 0.002))})))
    assert not {"variants", "shapes", "sizing"} & set(plain.ids)


def test_a_run_against_its_baseline_shows_both_runs_ceilings(tmp_path: Path) -> None:
    """`plimsoll run --baseline OLD/report.json`: the comparison across runs is kept in
    report.json and drawn in the page, not only printed (issue 54)."""
    old = make_report({"default": Run(400, 440, ladder(400, 440, 0.002))})
    new = make_report({"default": Run(300, 330, ladder(300, 330, 0.002))})
    code = finish(new, tmp_path, Gates(baseline=old, threshold=0.10), quiet=True)
    assert code == 99  # 25% below the baseline, beyond noise: the gate says no
    kept = read_report(tmp_path / "report.json")
    [comparison] = kept.against_baseline
    assert [v.name for v in comparison.variants] == ["baseline", "this run"]
    page = (tmp_path / "report.html").read_text()
    assert "baseline" in _parsed(page).ids
    assert comparison.headline in page
    assert "Against the baseline" not in render_html(old)


def test_the_spec_shown_keeps_no_credentials() -> None:
    report = llm_proxy_report()
    report.spec.metrics.prometheus_url = "http://alice:hunter2@prometheus:9090"
    page = render_html(report)
    assert "hunter2" not in page
    assert "prometheus:9090" in page


def test_a_report_without_histograms_says_why_no_latency_is_drawn() -> None:
    report = llm_proxy_report()
    for step in report.steps:  # as the operator's ConfigMap stores a long run
        assert step.client is not None
        step.client = step.client.model_copy(update={"operations": {}})
    page = render_html(report)
    assert "chart-bar-0" not in page
    assert "no step kept its latency histograms" in page


def test_plimsoll_run_writes_the_page_after_each_step_and_at_the_end(tmp_path: Path) -> None:
    report = llm_proxy_report()
    written = write_progress(report, tmp_path / "progress")
    assert [p.name for p in written] == ["report.json", "report.html"]
    assert "chart-timeline-step-4" in (tmp_path / "progress" / "report.html").read_text()
    names = [p.name for p in write_report(report, tmp_path / "end")]
    assert names[:3] == ["report.json", "report.md", "report.html"]
    assert not list((tmp_path / "end").glob("*.tmp"))


def test_a_run_that_stopped_before_any_step_still_gets_a_page_saying_why() -> None:
    report = llm_proxy_report()
    report.steps, report.records, report.ceilings, report.summary = [], [], [], []
    report.ceiling = None
    report.message = "the target did not become ready in 20 s"
    page = render_html(report)
    assert "the target did not become ready in 20 s" in page
    assert "No ceiling yet" in page
    assert _parsed(page).steps == [[*COLUMNS, "reasons"]]


async def test_the_live_view_rewrites_the_page_after_each_step(tmp_path: Path) -> None:
    steps = llm_proxy_report().step_pairs()
    sink = ConsoleSink(short_cpu_test(), tmp_path, console=Console(file=io.StringIO()))
    for count, (step, record) in enumerate(steps, start=1):
        await sink.step_finished(record, step)
        page = (tmp_path / "report.html").read_text()
        assert len(_parsed(page).steps) == 1 + count  # the heading and the steps so far
        assert "in progress (partial report)" in page


def test_without_plotly_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "plotly.io", None)  # as if not installed
    with pytest.raises(PlotlyMissingError, match=r"pip install '\.\[operator\]'"):
        render_html(llm_proxy_report())
