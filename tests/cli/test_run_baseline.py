"""`plimsoll run --baseline OLD/report.json --fail-on-regression 10%`: the local CI gate.

A real run in a process of its own (the CPU-bound example at 20 ms per request on
0.5 CPU, 25 requests/s at most: 1 s trials at 10, which passes, and 60, which
fails), gated against a fixture baseline it clearly fell below (exit 99); its
report, against one it matches, passes the same gate (exit 0). Bad options fail
before anything runs (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import junitparser
import pytest
import yaml

from plimsoll.api.step import Verdict
from tests.localrun import marked_processes, plimsoll
from tests.reportfixtures import Run, ladder, make_report, save

pytestmark = pytest.mark.usefixtures("mark")

SPEC = {
    "apiVersion": "plimsoll.dev/v1alpha1",
    "kind": "CapacityTest",
    "metadata": {"name": "gate"},
    "spec": {
        "target": {
            "command": ["python", "examples/targets/cpu_bound.py"],
            "env": {"WORK_MS": "20"},
            "resources": {"cpu": "0.5", "memory": "128Mi"},
        },
        "workload": {"model": "rate", "mix": [{"name": "work", "path": "/work"}]},
        "trial": {"duration": "1s", "warmUp": "0.3s"},
        "search": {"strategy": "steps", "levels": [10, 60], "repeats": 0},
        "passWhen": {"minAchieved": "90%", "latency": [{"quantile": "p99", "below": "300ms"}]},
        "generators": {"replicas": 1, "processes": 1},
        # About the gate, not which resource binds: no confirmation trials.
        "attribution": {"confirm": False},
    },
}


def spec_file(tmp_path: Path) -> str:
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return str(path)


def test_a_run_below_its_baseline_fails_the_gate_and_one_at_it_passes(
    tmp_path: Path, mark: str
) -> None:
    higher = save(make_report({"default": Run(400, 440, ladder(400, 440, 0.002))}), tmp_path / "a")
    same = save(
        make_report({"default": Run(10, 60, [(10, Verdict.PASS, 0.2), (60, Verdict.FAIL, 0.5)])}),
        tmp_path / "b",
    )
    spec = spec_file(tmp_path)

    result = plimsoll(
        "run",
        spec,
        "--quiet",
        "--out",
        str(tmp_path / "o1"),
        "--baseline",
        str(higher),
        "--fail-on-regression",
        "10%",
        "--junit",
        str(tmp_path / "junit.xml"),
    )
    assert result.returncode == 99, result.stdout + result.stderr
    # The JUnit file a CI system reads: the one variant's ceiling, failed by the gate.
    [suite] = list(junitparser.JUnitXml.fromfile(str(tmp_path / "junit.xml")))
    assert (suite.tests, suite.failures, suite.errors) == (1, 1, 0)
    [case] = list(suite)
    assert case.name == "ceiling default"
    assert "REGRESSION: this run holds 10 rps" in (case.result[0].message or "")
    assert "this run holds 98% fewer requests per second than baseline (outside noise)" in (
        result.stdout
    )
    assert "REGRESSION: this run holds 10 rps against baseline's 400" in result.stderr

    # The same gate, against a baseline the run matches, passes (compare: no second run).
    result = plimsoll(
        "compare", str(same), str(tmp_path / "o1" / "report.json"), "--fail-on-regression", "10%"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "within noise" in result.stdout
    assert marked_processes(mark) == []


def test_bad_gate_options_fail_before_the_run(tmp_path: Path) -> None:
    spec = spec_file(tmp_path)
    result = plimsoll("run", spec, "--fail-on-regression", "10%", timeout=30)
    assert result.returncode == 2
    assert "--fail-on-regression needs --baseline" in result.stderr
    result = plimsoll("run", spec, "--baseline", str(tmp_path / "missing.json"), timeout=30)
    assert result.returncode == 2
    assert "not a Plimsoll report.json" in result.stderr
    assert not (tmp_path / "plimsoll-out").exists()
