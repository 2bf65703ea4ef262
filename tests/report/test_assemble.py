"""The report is assembled once, from the run's record: every conclusion drawn from what
the run observed, none from another conclusion's leftovers (issue 53, item 5)."""

from __future__ import annotations

from plimsoll.api.report import RunReport
from plimsoll.api.run_record import RunRecord
from plimsoll.api.step import Verdict
from plimsoll.report.assemble import assemble
from tests.reportfixtures import Run, ladder, make_report


def _record(report: RunReport) -> RunRecord:
    """The observations of a fixture report, without its conclusions."""
    return RunRecord(**{name: getattr(report, name) for name in RunRecord.model_fields})


def test_the_conclusions_are_drawn_from_the_record() -> None:
    fixture = make_report(
        {
            "embedded": Run(400, 440, ladder(400, 440, 0.002)),
            "pg": Run(300, 330, ladder(300, 330, 0.003)),
        }
    )
    record = _record(fixture)
    report = assemble(record, record.spec.variant_specs())
    assert report.ceiling is not None
    assert report.ceiling.variant == "embedded"
    cpu = {c.variant: c.value for c in report.unit_costs if c.name == "CPU per request"}
    assert cpu == {"embedded": 2.0, "pg": 3.0}  # CPU-ms per request: each ladder's slope
    assert len(report.summary) == 2
    assert report.summary[0].startswith("[embedded]")
    assert report.comparison is not None
    assert [v.name for v in report.comparison.variants] == ["embedded", "pg"]
    # The record is what the run observed, and only that: the report is a new object.
    assert report.steps == record.steps
    assert report is not record
    assert not hasattr(record, "unit_costs")


def test_a_failed_run_with_no_ceiling_still_gets_its_report() -> None:
    fixture = make_report({"default": Run(None, 25, [(25, Verdict.FAIL, 0.1)])})
    record = _record(fixture).model_copy(update={"ceilings": [], "message": "the target died"})
    report = assemble(record, record.spec.variant_specs())
    assert report.ceiling is None
    assert report.summary == []
    assert report.comparison is None
    assert report.message == "the target died"
    assert len(report.steps) == 1
