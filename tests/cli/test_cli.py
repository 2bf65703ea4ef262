"""The CLI verbs owned by the core: crd, validate, size."""

import json
from importlib.metadata import version as package_version
from pathlib import Path

import yaml
from typer.testing import CliRunner

from plimsoll import DISTRIBUTION
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
    assert result.output == f"plimsoll {package_version(DISTRIBUTION)}\n"


# Examples the cluster refuses, and why: each validates for `plimsoll run` instead, and
# must stay refused on the cluster with this reason until the capability lands there.
LOCAL_ONLY: dict[str, str] = {}  # none since the autoscaler flight runs on a cluster


def test_validate_accepts_the_examples() -> None:
    files = [
        p
        for p in sorted((ROOT / "examples").glob("*.yaml"))
        if "kind: CapacityTest" in p.read_text()
    ]
    cluster = [str(p) for p in files if p.name not in LOCAL_ONLY]
    result = runner.invoke(app, ["validate", *cluster])
    assert result.exit_code == 0, result.output
    assert result.stdout.count(": valid") == len(cluster)
    local = [str(ROOT / "examples" / name) for name in LOCAL_ONLY]
    if local:  # `validate` with no file is a usage error
        result = runner.invoke(app, ["validate", "--local", *local])
        assert result.exit_code == 0, result.output
        assert result.stdout.count(": valid") == len(local)
    for name, reason in LOCAL_ONLY.items():
        refused = runner.invoke(app, ["validate", str(ROOT / "examples" / name)])
        assert refused.exit_code == 2, refused.output
        assert reason in refused.output


def test_an_example_target_runs_on_a_cluster_from_the_examples_image() -> None:
    """Where an example names its target's image beside a command that starts one of
    `examples/targets/`, it is the image `scripts/build-images` builds of them, at this
    version: the command finds the file in it (tests/images checks that it does)."""
    expected = f"plimsoll-examples:{package_version(DISTRIBUTION)}"
    checked = []
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            target = ((document or {}).get("spec") or {}).get("target") or {}
            command = target.get("command") or []
            if "image" in target and any(str(w).startswith("examples/targets/") for w in command):
                assert target["image"] == expected, path.name
                checked.append(path.name)
    assert "quickstart-cluster.yaml" in checked, checked
    assert len(checked) >= 5, checked


def test_validate_names_the_field_and_fails(tmp_path: Path) -> None:
    document = yaml.safe_load((ROOT / "examples" / "edge-max-rps.yaml").read_text())
    document["spec"]["target"]["resources"]["memory"] = "2GB"
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(document))
    result = runner.invoke(app, ["validate", str(broken)])
    assert result.exit_code == 2
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


def test_validate_warns_when_page_views_would_land_on_the_root(tmp_path: Path) -> None:
    document = yaml.safe_load((ROOT / "examples" / "mcp-gateway-users-per-pod.yaml").read_text())
    del document["spec"]["workload"]["users"]["pageViewPath"]
    unset = tmp_path / "unset.yaml"
    unset.write_text(yaml.safe_dump(document))
    result = runner.invoke(app, ["validate", str(unset)])
    assert result.exit_code == 0  # valid: a warning, not an error
    assert "warning (mcp-gateway-users-per-pod)" in result.stderr
    assert "users.pageViewPath" in result.stderr
    # The example names its dashboard: nothing to warn about.
    named = runner.invoke(
        app, ["validate", str(ROOT / "examples" / "mcp-gateway-users-per-pod.yaml")]
    )
    assert "warning" not in named.stderr


def test_size_from_a_report_says_where_each_cost_came_from(tmp_path: Path) -> None:
    from plimsoll.api.streams import StreamMemory
    from tests.reportfixtures import Run, make_report, save

    report = make_report({"default": Run(level=10600, high=12000, steps=[])})
    report.stream_memory = [StreamMemory(bytes_per_stream=73728, counts=[0, 500], memory_bytes=[])]
    path = save(report, tmp_path)
    args = ["size", "--report", str(path), "--peak", "20000", "--growth", "2", "--zones", "3"]
    args += ["--streams", "10000", "--upstream-latency", "200ms", "--busiest-client", "300"]
    args += ["--memory-per-in-flight", "100Ki", "--pod-memory", "1Gi"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    planned = json.loads(result.stdout)
    assert (planned["pods"], planned["streamCap"], planned["inFlightPerPod"]) == (12, 2500, 2000)
    assert planned["fitsPodMemory"] is True
    sources = {line["item"]: line["source"] for line in planned["lines"]}
    assert sources["stream cap"] == "memory_per_stream: report: streams probe, 2 counts"
    assert sources["in-flight cap"] == "memory_per_in_flight: flag"
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    assert "backstop" in table.stdout
    assert "limit 1,000/s, burst 2,000" in table.stdout


def test_size_without_a_peak_names_the_flag() -> None:
    result = runner.invoke(app, ["size", "--per-pod", "100"])
    assert result.exit_code == 2
    assert "--peak" in result.stderr


def test_short_trials_and_one_variant_from_the_command_line() -> None:
    from plimsoll.cli.run import _select, _shorten
    from plimsoll.cli.spec_file import read_capacity_tests

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


def test_size_from_a_report_prints_the_proof_of_its_own_plan(tmp_path: Path) -> None:
    from plimsoll.api.spec import CapacityTestSpec
    from plimsoll.decide.proof_plan import planned_proof
    from tests.reportfixtures import Run, make_report, save

    report = make_report({"default": Run(level=10600, high=12000, steps=[])})
    path = save(report, tmp_path)
    args = ["size", "--report", str(path), "--peak", "20000", "--growth", "2", "--zones", "3"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    stanza = yaml.safe_load(result.stdout.split("plimsoll run it:", 1)[1])
    assert stanza["search"]["strategy"] == "prove"
    assert stanza["sizing"]["perPod"] == 10600
    assert stanza["trial"]["faults"] == [{"at": "30s", "remove": {"zone": "a"}}]
    # The stanza in the run's spec is a valid proof of the same plan, scaled to fit.
    wire = report.spec.to_wire() | stanza
    proved = planned_proof(CapacityTestSpec.model_validate(wire))
    planned = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert proved.target.replicas == planned["pods"]
    assert proved.target.zones == ["a", "b", "c"]
    scale = proved.target.resources.cpu / report.spec.target.resources.cpu  # type: ignore[union-attr]
    assert proved.search.level == int(40000 * scale)


def test_validate_applies_the_clusters_limits_unless_local(tmp_path: Path) -> None:
    """Issue 52: "valid" means the operator accepts it too. The admin's limits apply at
    the chart's defaults, or as a `--cluster-policy` file gives them (the chart's
    `limits:`); `--local` checks a spec for `plimsoll run`, where they do not apply."""
    quickstart = str(ROOT / "examples" / "quickstart.yaml")
    policy = tmp_path / "policy.yaml"
    policy.write_text("limits:\n  pods: 3\n  trials: 10\n")
    strict = runner.invoke(app, ["validate", "--cluster-policy", str(policy), quickstart])
    assert strict.exit_code == 2, strict.output
    assert "quickstart: spec: the run needs 5 pods" in strict.output
    assert "limits.pods = 3" in strict.output
    assert "limits.trials = 10" in strict.output
    local = runner.invoke(app, ["validate", "--local", "--cluster-policy", str(policy), quickstart])
    assert local.exit_code == 0, local.output
    assert runner.invoke(app, ["validate", quickstart]).exit_code == 0  # the defaults
    policy.write_text("limits:\n  podz: 3\n")
    bad = runner.invoke(app, ["validate", "--cluster-policy", str(policy), quickstart])
    assert bad.exit_code == 2
    assert "limits.podz: not a limit" in bad.output


def test_validate_applies_the_operators_prometheus_promql_and_target_checks(
    tmp_path: Path,
) -> None:
    """The same module as the operator's (`kube/run_policy.py`): a Prometheus the chart
    does not allow, PromQL that reads beyond `$namespace`, `target.url` at the cloud's
    metadata address; a `--cluster-policy` naming the server allows it."""
    document = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    spec = document["spec"]
    spec["metrics"] = {"prometheusUrl": "http://prom.example:9090"}
    spec["passWhen"]["promql"] = [{"name": "all", "query": "sum(up)", "below": 1}]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(document))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert "spec.metrics.prometheusUrl: 'http://prom.example:9090' is not a Prometheus" in (
        result.output
    )
    assert "spec.passWhen.promql[0].query:" in result.output
    assert runner.invoke(app, ["validate", "--local", str(path)]).exit_code == 0
    spec["passWhen"]["promql"] = []
    spec["target"] = {
        "url": "http://169.254.169.254/latest",
        "resources": spec["target"]["resources"],
    }
    path.write_text(yaml.safe_dump(document))
    values = tmp_path / "values.yaml"
    values.write_text("prometheus:\n  allowedUrls: [http://prom.example:9090]\n")
    aimed = runner.invoke(app, ["validate", "--cluster-policy", str(values), str(path)])
    assert aimed.exit_code == 2, aimed.output
    assert "spec.target.url: '169.254.169.254'" in aimed.output
    assert "prometheusUrl" not in aimed.output  # allowed by the values


def test_validate_holds_target_url_to_the_admins_external_targets(tmp_path: Path) -> None:
    """Issue 52, item 3: on a cluster an external target is opt-in. By the chart's
    default (none listed) a `target.url` is refused naming the list and the fix; a values
    file that lists the host admits it; `--local` (for `plimsoll run`) never asks."""
    document = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    document["spec"]["target"] = {
        "url": "http://shop.example.com:8080/",
        "resources": document["spec"]["target"]["resources"],
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(document))
    refused = runner.invoke(app, ["validate", str(path)])
    assert refused.exit_code == 2, refused.output
    assert "spec.target.url: 'shop.example.com' is not an external target" in refused.output
    assert "externalTargets" in refused.output
    assert runner.invoke(app, ["validate", "--local", str(path)]).exit_code == 0
    values = tmp_path / "values.yaml"
    values.write_text("externalTargets: [.example.com]\n")
    listed = runner.invoke(app, ["validate", "--cluster-policy", str(values), str(path)])
    assert listed.exit_code == 0, listed.output
    values.write_text("externalTargets: [10.0.0.0/99]\n")
    bad = runner.invoke(app, ["validate", "--cluster-policy", str(values), str(path)])
    assert bad.exit_code == 2
    assert "externalTargets: '10.0.0.0/99' is not a network" in bad.output


def test_validate_local_refuses_what_this_machine_cannot_start(tmp_path: Path) -> None:
    """`--local` checks for `plimsoll run`: a target it would refuse at the start (an
    image only, a Deployment's copy) is refused here already, with the same words."""
    document = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    shape = document["spec"]["target"]["resources"]
    path = tmp_path / "spec.yaml"
    for target, words in [
        ({"fromDeployment": {"name": "api"}}, "target.fromDeployment copies the Deployment 'api'"),
        ({"image": "shop/api:1"}, "the local platform runs commands, not images"),
    ]:
        document["spec"]["target"] = {**target, "resources": shape}
        path.write_text(yaml.safe_dump(document))
        local = runner.invoke(app, ["validate", "--local", str(path)])
        assert local.exit_code == 2, local.output
        assert f"quickstart (default): {words}" in local.output
        assert runner.invoke(app, ["validate", str(path)]).exit_code == 0  # a cluster runs it
