"""report.md carries the plan spec.sizing asked for, each row with its cost's source."""

from plimsoll.api.sizing import SizingSpec
from plimsoll.decide.sizing import plan_deployment
from plimsoll.decide.sizing_costs import resolve
from plimsoll.report.markdown import render_markdown
from tests.reportfixtures import Run, make_report


def test_the_plan_is_a_section_of_report_md() -> None:
    report = make_report({"default": Run(level=10600, high=12000)})
    report.spec.sizing = SizingSpec(peak=20000, growth=2, zones=3, busiest_client=300)
    report.sizing = plan_deployment(
        resolve(report.spec.sizing, report, {}, costs=report.unit_costs)
    )
    text = render_markdown(report)
    section = text.split("## Sizing", 1)[1].split("\n## ", 1)[0]
    assert "12 pods, 4 per zone" in section
    assert "| pods for the load |" in section
    assert "per_pod: report: ceiling of default, rps" in section
    assert "limit 1,000/s, burst 2,000" in section


def test_no_sizing_no_section() -> None:
    assert "## Sizing" not in render_markdown(make_report({"default": Run(level=100, high=200)}))
