"""`plimsoll run --junit FILE`: the run's cases as JUnit XML, which CI systems show natively.

One test suite named after the test, one test case per case of
`plimsoll.decide.pipeline_gate` (each variant's ceiling, or the proof): a case that
passed is a plain test case, one that says no carries a `<failure>`, one that could not
be judged an `<error>`, each with its sentence. Written with the standard library's
ElementTree; the tests read it back with `junitparser`, as a CI system would.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from plimsoll.api.report import RunReport
from plimsoll.decide.pipeline_gate import Case


def junit_xml(report: RunReport, cases: Sequence[Case]) -> str:
    failures = sum(case.passed is False for case in cases)
    errors = sum(case.passed is None for case in cases)
    seconds = (report.ended_at - report.started_at).total_seconds() if report.ended_at else 0.0
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=f"plimsoll {report.test_name}",
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time=f"{seconds:.3f}",
        timestamp=report.started_at.isoformat(),
    )
    for case in cases:
        element = ET.SubElement(
            suite, "testcase", name=case.name, classname=f"plimsoll.{report.test_name}", time="0"
        )
        if case.passed is False:
            ET.SubElement(
                element, "failure", message=case.message, type="refused"
            ).text = case.message
        elif case.passed is None:
            ET.SubElement(
                element, "error", message=case.message, type="incomplete"
            ).text = case.message
        else:
            ET.SubElement(element, "system-out").text = case.message
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode")


def write_junit(report: RunReport, cases: Sequence[Case], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(report, cases) + "\n")
    return path
