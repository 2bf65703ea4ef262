"""report.md opens with the comparison and its headline; the charts overlay the variants."""

from __future__ import annotations

import json
from pathlib import Path

from plimsoll.report.comparison import compare_variants, comparison_markdown, headline
from plimsoll.report.files import read_report, write_report
from tests.reportfixtures import Run, ladder, make_report


def test_the_headline_names_each_outcome_against_the_baseline() -> None:
    report = make_report(
        {
            "embedded": Run(400, 440, ladder(400, 440, 0.002)),
            "postgres": Run(350, 385, ladder(350, 385, 0.0025)),
            "embedded-again": Run(420, 460, ladder(420, 460, 0.002)),
        }
    )
    comparison = compare_variants(report, report.unit_costs)
    assert comparison is not None
    assert headline(comparison) == (
        "postgres holds 12% fewer requests per second than embedded (outside noise); "
        "embedded-again holds as many requests per second as embedded within noise (+5%)."
    )


def test_a_single_ceiling_has_no_comparison() -> None:
    assert compare_variants(make_report({"default": Run(400, 440)}), []) is None


def test_report_md_opens_with_the_table_and_json_carries_the_comparison(tmp_path: Path) -> None:
    report = make_report(
        {
            "no-sensors": Run(400, 440, ladder(400, 440, 0.002), value=0, cpu_per_request_ms=2.0),
            "ten-sensors": Run(300, 330, ladder(300, 330, 0.003), value=10, cpu_per_request_ms=3.0),
        },
        value_unit="sensors",
    )
    report.comparison = compare_variants(report, report.unit_costs)
    written = {p.name for p in write_report(report, tmp_path)}

    assert {"ceilings.png", "ceilings.svg", "resources.png"} <= written
    markdown = (tmp_path / "report.md").read_text()
    body = markdown.split("\n", 2)[2]  # after the title
    assert body.startswith(
        "**ten-sensors holds 25% fewer requests per second than no-sensors (outside noise).**"
    )
    assert "| ten-sensors (10 sensors) | 300 rps | 300 … 330 | 300, 300 | 300 … 330 | cpu |" in body
    assert "-25.0% (lower)" in body
    assert "| ten-sensors | CPU per request per sensor | 0.1 CPU-ms |" in body
    assert body.index("Δ vs baseline") < body.index("## Ceilings")
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["comparison"]["variants"][1]["difference"] == "lower"
    assert read_report(tmp_path / "report.json").comparison == report.comparison


def test_an_older_report_without_a_comparison_gets_one_when_rendered(tmp_path: Path) -> None:
    report = make_report(
        {"a": Run(400, 440, ladder(400, 440, 0.002)), "b": Run(420, 460, ladder(420, 460, 0.002))}
    )
    assert report.comparison is None
    write_report(report, tmp_path)
    assert "**b holds as many requests per second as a within noise" in (
        (tmp_path / "report.md").read_text()
    )


def test_a_ceiling_from_a_run_that_stopped_early_says_so() -> None:
    report = make_report({"a": Run(400, 440), "b": Run(200, None)})
    report.ceilings[1].complete = False
    comparison = compare_variants(report, report.unit_costs)
    assert comparison is not None
    assert "| b | 200 rps (stopped early) |" in comparison_markdown(comparison)
