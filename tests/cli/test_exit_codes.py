"""`plimsoll run`'s exit codes, one test each, and its `--junit` file read back by junitparser.

What a finished run prints and exits with is `plimsoll.cli.run_end.finish`, the code
`plimsoll run` calls once the runner returned: here it is handed report fixtures with
known ceilings (writing the real report files), so each code is reached without a
whole run. The code before a run (2: a bad spec or flag) goes through the command
itself; a run that cannot begin exits 1 in `tests/run/test_run_metrics_options.py`
(the exporter's address taken), and `tests/cli/test_run_baseline.py` reaches 99
through a real run.
"""

from __future__ import annotations

from pathlib import Path

import junitparser
import pytest
import typer.main
from typer.testing import CliRunner

from plimsoll.api.proof import Proof
from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.step import Verdict
from plimsoll.cli.app import app
from plimsoll.cli.exits import EXIT_INCOMPLETE, EXIT_INVALID_SPEC, EXIT_OK, EXIT_REFUSED
from plimsoll.cli.run_end import Gates, finish
from tests.localrun import ROOT
from tests.reportfixtures import Run, ladder, make_report

runner = CliRunner()


def _two_variants() -> RunReport:
    return make_report(
        {
            "default": Run(400, 440, ladder(400, 440, 0.002)),
            "postgres": Run(200, 220, ladder(200, 220, 0.004)),
        },
        name="store",
    )


def _suite(path: Path) -> junitparser.TestSuite:
    xml = junitparser.JUnitXml.fromfile(str(path))
    [suite] = list(xml)
    return suite


def _outcomes(suite: junitparser.TestSuite) -> dict[str, str]:
    found = {}
    for case in suite:
        result = case.result
        found[case.name] = type(result[0]).__name__ if result else "passed"
    return found


def test_0_every_ceiling_found_and_within_the_bar(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    code = finish(_two_variants(), tmp_path / "out", Gates(fail_below=150, junit=junit))
    assert code == EXIT_OK == 0
    assert (tmp_path / "out" / "report.md").exists()
    suite = _suite(junit)
    assert (suite.tests, suite.failures, suite.errors) == (2, 0, 0)
    assert _outcomes(suite) == {"ceiling default": "passed", "ceiling postgres": "passed"}


def test_99_a_ceiling_below_the_bar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "junit.xml"
    code = finish(_two_variants(), tmp_path / "out", Gates(fail_below=300, junit=junit))
    assert code == EXIT_REFUSED == 99
    assert "NO: ceiling postgres: ceiling 200 rps, below the bar of 300 rps" in (
        capsys.readouterr().err
    )
    suite = _suite(junit)
    assert (suite.tests, suite.failures, suite.errors) == (2, 1, 0)
    assert _outcomes(suite) == {"ceiling default": "passed", "ceiling postgres": "Failure"}
    [failed] = [case for case in suite if case.name == "ceiling postgres"]
    assert "below the bar of 300 rps" in (failed.result[0].message or "")


def test_99_a_regression_against_the_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = make_report(
        {
            "default": Run(400, 440, ladder(400, 440, 0.002)),
            "postgres": Run(400, 440, ladder(400, 440, 0.002)),
        },
        name="store",
    )
    junit = tmp_path / "junit.xml"
    gates = Gates(baseline=baseline, threshold=0.10, junit=junit)
    assert finish(_two_variants(), tmp_path / "out", gates) == 99
    assert "REGRESSION: this run:postgres holds 200" in capsys.readouterr().err
    assert _outcomes(_suite(junit)) == {"ceiling default": "passed", "ceiling postgres": "Failure"}
    # The same run against itself passes the same gate.
    same = Gates(baseline=_two_variants(), threshold=0.10)
    assert finish(_two_variants(), tmp_path / "again", same) == 0


def test_99_a_proof_that_did_not_hold(tmp_path: Path) -> None:
    report = make_report({"default": Run(35, None, [(35, Verdict.FAIL, 0.5)])}, name="plan")
    report.proof = Proof(held=False, level=35, unit="rps", replicas=3, sentence="it did not hold")
    junit = tmp_path / "junit.xml"
    assert finish(report, tmp_path / "out", Gates(junit=junit)) == 99
    suite = _suite(junit)
    assert (suite.tests, suite.failures, suite.errors) == (1, 1, 0)
    assert _outcomes(suite) == {"proof": "Failure"}


def test_1_a_run_that_could_not_complete(tmp_path: Path) -> None:
    report = _two_variants()
    report.outcome, report.message = Outcome.FAILED, "the target exited (code 3)"
    report.ceilings[1] = report.ceilings[1].model_copy(update={"complete": False})
    junit = tmp_path / "junit.xml"
    # A bar it would fail does not turn "broke" into "refused": nothing was answered.
    code = finish(report, tmp_path / "out", Gates(fail_below=300, junit=junit))
    assert code == EXIT_INCOMPLETE == 1
    suite = _suite(junit)
    assert (suite.tests, suite.failures, suite.errors) == (2, 0, 1)
    assert _outcomes(suite)["ceiling postgres"] == "Error"


def test_2_an_invalid_spec_or_flag(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: plimsoll.dev/v1alpha1\nkind: CapacityTest\nmetadata: {name: x}\n")
    result = runner.invoke(app, ["run", str(bad)])
    assert result.exit_code == EXIT_INVALID_SPEC == 2
    assert f"{bad}: invalid" in result.stderr
    spec = str(ROOT / "examples" / "quickstart.yaml")
    flag = runner.invoke(app, ["run", spec, "--trial-duration", "20 seconds"])
    assert flag.exit_code == 2
    assert "--trial-duration" in flag.stderr
    assert "'20 seconds' is not a duration" in flag.stderr
    below = runner.invoke(app, ["run", spec, "--fail-below", "0"])
    assert below.exit_code == 2
    assert "--fail-below" in below.stderr


def test_duration_flags_take_the_specs_units() -> None:
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    spec = str(ROOT / "examples" / "quickstart.yaml")
    args = [spec, "--trial-duration", "20s", "--warm-up", "500ms", "--scrape-wait", "2m"]
    params = command.make_context("run", args).params
    assert (params["trial_duration"], params["warm_up"], params["scrape_wait"]) == (20.0, 0.5, 120)
    bare = command.make_context("run", [spec, "--trial-duration", "20"]).params
    assert bare["trial_duration"] == 20.0  # a bare number is still seconds
    assert command.make_context("run", [spec]).params["scrape_wait"] == 120.0
