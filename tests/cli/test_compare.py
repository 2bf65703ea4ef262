"""`plimsoll compare` on report fixtures: the table, JSON, and the regression gate's exit codes."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plimsoll.api.step import Verdict
from plimsoll.cli.app import app
from tests.reportfixtures import CHANGE, Run, ladder, make_report, save

runner = CliRunner()


def runs(tmp_path: Path, *outcomes: Run) -> list[str]:
    return [
        str(save(make_report({"default": run}), tmp_path / f"v{index + 1}"))
        for index, run in enumerate(outcomes)
    ]


BASE = Run(400, 440, ladder(400, 440, 0.002), cpu_per_request_ms=2.0)


def test_markdown_names_each_run_by_its_folder_and_states_the_outcome(tmp_path: Path) -> None:
    files = runs(tmp_path, BASE, Run(300, 330, ladder(300, 330, 0.0027), cpu_per_request_ms=2.7))
    result = runner.invoke(app, ["compare", *files])
    assert result.exit_code == 0, result.output  # no gate asked for: a report only
    assert result.stdout.startswith(
        "**v2 holds 25% fewer requests per second than v1 (outside noise).**"
    )
    assert "| v2 | 300 rps | 300 … 330 | 300, 300 | 300 … 330 | cpu | -25.0% (lower) |" in (
        result.stdout
    )
    assert "| v2 | CPU per request | 2.7 CPU-ms | +35.0% |" in result.stdout


@pytest.mark.parametrize(
    ("candidate", "threshold", "exit_code"),
    [
        (Run(300, 330, ladder(300, 330, 0.0027)), "10%", 99),  # -25%, outside noise
        (Run(300, 330, ladder(300, 330, 0.0027)), "30%", 0),  # outside noise, under 30%
        (Run(350, 400, ladder(350, 400, 0.0023)), "10%", 0),  # -12.5%, but the bands touch
        (Run(800, 880, ladder(800, 880, 0.001)), "10%", 0),  # higher
        (Run(None, 25, [(25, Verdict.FAIL, 0.05)]), "10%", 99),  # passed nothing
    ],
)
def test_fail_on_regression_needs_a_drop_beyond_the_threshold_and_outside_noise(
    tmp_path: Path, candidate: Run, threshold: str, exit_code: int
) -> None:
    files = runs(tmp_path, BASE, candidate)
    result = runner.invoke(app, ["compare", *files, "--fail-on-regression", threshold])
    assert result.exit_code == exit_code, result.output
    assert ("REGRESSION: v2" in result.stderr) is bool(exit_code)


def test_json_output_carries_the_comparison_and_a_named_baseline(tmp_path: Path) -> None:
    files = runs(tmp_path, BASE, Run(300, 330, ladder(300, 330, 0.0027)))
    result = runner.invoke(
        app, ["compare", *files, "--json", "--label", "old", "--label", "new", "--baseline", "new"]
    )
    assert result.exit_code == 0, result.output
    [comparison] = json.loads(result.stdout)
    assert comparison["baseline"] == "new"
    old, new = comparison["variants"]
    assert (old["name"], old["difference"], new["difference"]) == ("old", "higher", "baseline")
    assert old["deltaPercent"] == pytest.approx(100 / 3)


def test_variants_are_matched_by_name_across_runs(tmp_path: Path) -> None:
    two = {"a": BASE, "b": Run(200, 220, ladder(200, 220, 0.004))}
    first = save(make_report(two), tmp_path / "r1")
    second = save(make_report({"a": BASE, "b": BASE}), tmp_path / "r2")
    markdown = runner.invoke(app, ["compare", str(first), str(second)]).stdout
    assert markdown.startswith("## Variant a\n\n**r2:a holds as many")
    assert "## Variant b\n\n**r2:b holds 100% more requests per second than r1:b" in markdown
    result = runner.invoke(app, ["compare", str(first), str(second), "--json"])
    assert result.exit_code == 0, result.output
    by_variant = {c["baseline"]: c for c in json.loads(result.stdout)}
    assert set(by_variant) == {"r1:a", "r1:b"}
    assert by_variant["r1:b"]["variants"][1]["difference"] == "higher"
    assert by_variant["r1:a"]["variants"][1]["difference"] == "within noise"


def test_unreadable_reports_and_bad_thresholds_exit_2(tmp_path: Path) -> None:
    files = runs(tmp_path, BASE)
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    result = runner.invoke(app, ["compare", files[0], str(broken)])
    assert result.exit_code == 2
    assert "not a Plimsoll report.json" in result.stderr
    result = runner.invoke(app, ["compare", files[0], files[0], "--fail-on-regression", "150%"])
    assert result.exit_code == 2
    assert "'150%'" in result.output
    assert "'10%'" in result.output  # the fix, by example
    result = runner.invoke(app, ["compare", files[0]])
    assert result.exit_code == 2
    assert "at least two reports" in result.stderr


def test_a_reports_changepoints_follow_the_comparison_under_its_label(tmp_path: Path) -> None:
    candidate = make_report({"default": Run(300, 330, ladder(300, 330, 0.0027))})
    candidate.changepoints = [CHANGE]
    files = [
        str(save(make_report({"default": BASE}), tmp_path / "v1")),
        str(save(candidate, tmp_path / "v2")),
    ]
    result = runner.invoke(app, ["compare", *files])
    assert result.exit_code == 0, result.output
    assert "## Changepoints: v2" in result.stdout
    assert f"- default: {CHANGE.sentence} (mean 400 → 300, p = 0.000)" in result.stdout
    assert "Changepoints: v1" not in result.stdout  # its history showed none
