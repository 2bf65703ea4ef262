"""The run's headline ceiling is the baseline variant's: `spec.baseline` when set, else
the first variant's; none for a run that found none."""

from __future__ import annotations

from plimsoll.decide.headline import headline_ceiling
from tests.reportfixtures import Run, make_report


def test_the_first_variant_heads_a_run_without_a_named_baseline() -> None:
    report = make_report({"a": Run(400, 440), "b": Run(200, 220)})
    headline = headline_ceiling(report)
    assert headline is not None
    assert headline.variant == "a"


def test_the_named_baseline_heads_the_run() -> None:
    report = make_report({"a": Run(400, 440), "b": Run(200, 220)})
    named = report.model_copy(update={"spec": report.spec.model_copy(update={"baseline": "b"})})
    headline = headline_ceiling(named)
    assert headline is not None
    assert headline.variant == "b"


def test_no_ceiling_no_headline() -> None:
    report = make_report({"default": Run(400, 440)})
    assert headline_ceiling(report.model_copy(update={"ceilings": []})) is None
