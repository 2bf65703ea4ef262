"""report.html in a real browser: Debian's Chromium, headless, opens the page from a file.

Nothing a person would see is taken on trust: the page logs no console error and
throws nothing, it requests nothing but itself (plotly.js is inline), and every
chart has drawn each series it declares (each in the legend, each a trace group
with a drawn path in the SVG). Checked on the LLM-proxy fixture (two operations,
bars on TTFT and on one operation's total, a fault, two replicas) and on the page a
real short `plimsoll run` wrote. Each visit's screenshot is saved in the test's
folder; docs/images/report-html.png is one of them (docs/reference/report.md).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
import yaml

from plimsoll.report.html import render_html
from tests.browser import Browser, Visit, chromium_missing
from tests.localrun import marked_processes, plimsoll
from tests.reportfixtures import llm_proxy_report

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing())),
]

# Ready once plotly has drawn an SVG in every chart's element.
READY = (
    "window.Plotly !== undefined && Array.from(document.querySelectorAll('[data-chart]'))"
    ".every(c => { const g = c.querySelector('.js-plotly-plot');"
    " return g && g._fullLayout && g.querySelector('.main-svg .cartesianlayer'); })"
)
# Per chart: the series it declares, the legend's entries, the trace groups in the plot
# and how many of them drew a path with a shape.
READ = """Array.from(document.querySelectorAll('[data-chart]')).map(c => {
  const plot = c.querySelector('.js-plotly-plot');
  const traces = Array.from(plot.querySelectorAll('.cartesianlayer g.trace'));
  return {
    id: c.dataset.chart,
    series: JSON.parse(c.dataset.series),
    legend: Array.from(plot.querySelectorAll('g.legend .legendtext')).map(t => t.textContent),
    traces: traces.length,
    drawn: traces.filter(t => Array.from(t.querySelectorAll('path'))
      .some(p => (p.getAttribute('d') || '').length > 4)).length,
  };
})"""


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def open_page(page: Path, screenshot: Path) -> Visit:
    with Browser() as browser:
        visit = browser.visit(page, READY, READ)
    screenshot.write_bytes(visit.screenshot)
    return visit


def assert_every_chart_drew(visit: Visit) -> list[dict[str, Any]]:
    assert visit.console_errors == []
    assert visit.foreign_requests == []
    charts: list[dict[str, Any]] = visit.value
    assert charts
    for chart in charts:
        assert chart["series"], chart
        assert chart["legend"] == chart["series"], chart
        assert chart["traces"] == len(chart["series"]), chart
        assert chart["drawn"] == chart["traces"], chart
    width, height = _png_size(visit.screenshot)
    assert width == 1280
    assert height > 900
    return charts


@pytest.mark.overlaps  # it judges a page, not a timing: another test beside it changes nothing
def test_the_fixture_page_draws_every_chart_offline(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(llm_proxy_report()))
    visit = open_page(page, tmp_path / "report-html.png")
    charts = assert_every_chart_drew(visit)
    by_id = {c["id"]: c for c in charts}
    assert by_id["chart-bar-0"]["series"] == ["p95 ttft", "bar: p95 ttft latency of chat < 900 ms"]
    assert "fault: 1 replica killed at 2 s" in by_id["chart-timeline-step-2"]["series"]
    assert by_id["chart-timeline-step-1"]["series"][-2:] == ["replica 0", "replica 1"]


SPEC = {
    "apiVersion": "plimsoll.dev/v1alpha1",
    "kind": "CapacityTest",
    "metadata": {"name": "html"},
    "spec": {
        "target": {
            "command": ["python", "examples/targets/cpu_bound.py"],
            "env": {"WORK_MS": "20"},
            "resources": {"cpu": "0.5", "memory": "128Mi"},
        },
        "workload": {
            "model": "rate",
            "mix": [
                {"name": "work", "path": "/work", "weight": 3},
                {"name": "light", "path": "/work?light", "weight": 1},
            ],
        },
        "trial": {"duration": "1.5s", "warmUp": "0.3s"},
        # 25 requests/s at most (20 ms of CPU each on 0.5 CPU): 40 fails.
        "search": {"strategy": "steps", "levels": [8, 40], "repeats": 0},
        # The charts of a search; the experiment's table is tests/run/test_confirm_local.py's.
        "attribution": {"confirm": False},
        "passWhen": {
            "minAchieved": "90%",
            "latency": [
                {"operation": "work", "quantile": "p99", "below": "300ms"},
                {"quantile": "p95", "below": "200ms"},
            ],
        },
        "generators": {"replicas": 1, "processes": 1},
        # A shared test host: a busy step stays a fail here instead of being repeated.
        "noise": {"repeatWhenBusy": False},
    },
}


@pytest.mark.usefixtures("mark")
def test_a_real_runs_page_draws_every_chart_offline(tmp_path: Path, mark: str) -> None:
    spec = tmp_path / "html.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    out = tmp_path / "out"
    result = plimsoll("run", str(spec), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "report.html" in result.stdout
    assert marked_processes(mark) == []
    visit = open_page(out / "report.html", tmp_path / "report-html-run.png")
    charts = [c["id"] for c in assert_every_chart_drew(visit)]
    assert charts[:4] == ["chart-bar-0", "chart-bar-1", "chart-operations", "chart-resources"]
    assert {"chart-timeline-step-0", "chart-timeline-step-1"} <= set(charts)
