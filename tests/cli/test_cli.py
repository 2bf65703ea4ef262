"""The CLI verbs owned by the core: crd, validate, size."""

import json
from importlib.metadata import version as package_version
from pathlib import Path

import yaml
from typer.testing import CliRunner

from plimsoll.api.crd import render_crd
from plimsoll.cli.app import app

ROOT = Path(__file__).parents[2]
runner = CliRunner()


def test_crd_prints_the_generated_definition() -> None:
    result = runner.invoke(app, ["crd"])
    assert result.exit_code == 0
    assert result.stdout == render_crd()


def test_version_prints_the_installed_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"plimsoll {package_version('plimsoll')}\n"


def test_validate_accepts_the_examples() -> None:
    files = [
        str(p)
        for p in sorted((ROOT / "examples").glob("*.yaml"))
        if "kind: CapacityTest" in p.read_text()
    ]
    result = runner.invoke(app, ["validate", *files])
    assert result.exit_code == 0, result.output
    assert result.stdout.count(": valid") == len(files)


def test_validate_names_the_field_and_fails(tmp_path: Path) -> None:
    document = yaml.safe_load((ROOT / "examples" / "edge-max-rps.yaml").read_text())
    document["spec"]["target"]["resources"]["memory"] = "2GB"
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(document))
    result = runner.invoke(app, ["validate", str(broken)])
    assert result.exit_code == 1
    assert "spec.target.resources.memory:" in result.stderr
    assert "did you mean '2Gi'" in result.stderr


def test_size_prints_a_plan_as_json() -> None:
    result = runner.invoke(
        app,
        [
            "size",
            "--per-pod",
            "10600",
            "--peak",
            "20000",
            "--growth",
            "2",
            "--zones",
            "3",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pods"] == 12


def test_size_rejects_a_bad_share_with_exit_code_2() -> None:
    result = runner.invoke(
        app, ["size", "--per-pod", "100", "--peak", "10", "--utilisation", "160%"]
    )
    assert result.exit_code == 2
    assert "utilisation" in result.stderr


def test_short_trials_and_one_variant_from_the_command_line() -> None:
    from plimsoll.cli.run import _select, _shorten
    from plimsoll.cli.specfile import read_capacity_tests

    [test] = read_capacity_tests(ROOT / "examples" / "mcp-gateway-users-per-pod.yaml")
    short = _shorten(test, 20.0, 5.0)
    assert (short.spec.trial.duration, short.spec.trial.warm_up) == (20.0, 5.0)
    assert _shorten(test, None, None) is test
    # The PostgreSQL-only extra metric goes with the variant left out; it stays with its own.
    embedded = _select([test], "embedded")
    assert [v.name for v in embedded.spec.variants] == ["embedded"]
    assert embedded.spec.metrics.extra == []
    postgres = _select([test], "postgres")
    assert [m.name for m in postgres.spec.metrics.extra] == ["store-commits-per-user"]
    # A baseline naming the variant left out goes too (it crashed the report before).
    [compare] = read_capacity_tests(ROOT / "examples" / "gateway-store-compare.yaml")
    alone = _select([compare], "postgres")
    assert alone.spec.baseline is None
    assert alone.spec.baseline_name == "postgres"
    assert _select([compare], "embedded").spec.baseline == "embedded"
