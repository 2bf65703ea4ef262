"""The chart renders with the real Helm engine, lints clean, and every object is valid.

Each mode of values.yaml is rendered; every object is checked against the
Kubernetes schemas of the oldest version the chart supports and the newest
bundled with kubernetes-validate (strict: unknown fields are errors).
"""

from __future__ import annotations

import inspect
import os
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from plimsoll.cli.operator import operator_cmd
from plimsoll.decide.target_policy import external_targets_from
from tests.charts.helm import CHART, MODES, NAMESPACE, objects, of_kind, one, render

KUBE_VERSIONS = ["1.30.0", kubernetes_validate.latest_version()]
# Kinds from other projects' CRDs, which kubernetes-validate has no schema for;
# they are checked by what they must select instead (test_metrics_wiring).
FOREIGN_KINDS = {"ServiceMonitor", "PrometheusRule"}
# kopf's peering kinds: their CRDs ship in crds/kopf-peering.yaml (checked below).
PEERING_KINDS = {"ClusterKopfPeering", "KopfPeering"}


@pytest.mark.parametrize("mode", MODES)
def test_lint_passes_without_warnings(mode: str) -> None:
    report = helm_python.lint(CHART, MODES[mode], strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    # Severity 1 is advice ("icon is recommended"); 2 and up are warnings and errors.
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_every_object_validates(mode: str, version: str) -> None:
    rendered = objects(MODES[mode])
    assert rendered
    for item in rendered:
        if item["kind"] in FOREIGN_KINDS | PEERING_KINDS:
            continue
        kubernetes_validate.validate(item, version, strict=True)


@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_chart_crds_validate(version: str) -> None:
    crd = yaml.safe_load((CHART / "crds" / "capacitytest.yaml").read_text())
    kubernetes_validate.validate(crd, version, strict=True)
    peering = list(yaml.safe_load_all((CHART / "crds" / "kopf-peering.yaml").read_text()))
    assert {c["spec"]["names"]["kind"] for c in peering} == PEERING_KINDS
    for crd in peering:
        kubernetes_validate.validate(crd, version, strict=True)


def test_two_replicas_join_one_peering_object_and_roll_without_a_gap() -> None:
    items = objects({"replicas": 2})
    deployment = one(items, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    peering = one(items, "ClusterKopfPeering")
    assert peering["apiVersion"] == "kopf.dev/v1"
    env = _env(_container(items))
    assert env["PLIMSOLL_PEERING"] == peering["metadata"]["name"] == "plimsoll"
    assert env["PLIMSOLL_PEERING_LIFETIME"] == "30"
    assert env["POD_ID"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    [operator_role] = [
        r for r in of_kind(items, "ClusterRole") if r["metadata"]["name"] == "plimsoll"
    ]
    rules = operator_role["rules"]
    assert any("clusterkopfpeerings" in r["resources"] and "patch" in r["verbs"] for r in rules)


def test_namespaced_mode_has_a_peering_object_and_its_rights_in_each_namespace() -> None:
    items = objects(MODES["namespaced"])
    peerings = of_kind(items, "KopfPeering")
    assert sorted(p["metadata"]["namespace"] for p in peerings) == ["team-a", "team-b"]
    assert {p["metadata"]["name"] for p in peerings} == {"plimsoll"}
    for role in of_kind(items, "Role"):
        assert any(
            "kopfpeerings" in r["resources"] and "watch" in r["verbs"] for r in role["rules"]
        )


def test_without_peering_one_replica_is_recreated_and_two_are_refused() -> None:
    items = objects({"peering": {"enabled": False}})
    assert of_kind(items, "ClusterKopfPeering") == []
    assert one(items, "Deployment")["spec"]["strategy"] == {"type": "Recreate"}
    assert "PLIMSOLL_PEERING" not in _env(_container(items))
    with pytest.raises(helm_python.HelmError, match=r"replicas > 1 needs peering\.enabled"):
        render({"peering": {"enabled": False}, "replicas": 2})


def test_default_objects() -> None:
    kinds = sorted(item["kind"] for item in objects())
    assert kinds == [
        "ClusterKopfPeering",
        "ClusterRole",
        "ClusterRole",
        "ClusterRole",
        "ClusterRole",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "NetworkPolicy",
        "Service",
        "ServiceAccount",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ]


def test_the_operators_pod_admits_only_its_metrics_port() -> None:
    """Issue 52, item 5: nothing but a scrape reaches the operator, from where the admin
    says (any address when unsaid: the port serves counters only)."""
    policy = one(objects(), "NetworkPolicy")["spec"]
    deployment = one(objects(), "Deployment")
    assert policy["podSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert policy["policyTypes"] == ["Ingress"]
    [rule] = policy["ingress"]
    assert rule == {"ports": [{"port": "metrics", "protocol": "TCP"}]}
    ports = {p["name"] for p in _container([deployment])["ports"]}
    assert "metrics" in ports
    monitoring = [{"namespaceSelector": {"matchLabels": {"name": "monitoring"}}}]
    narrowed = one(objects({"networkPolicy": {"metricsFrom": monitoring}}), "NetworkPolicy")
    assert narrowed["spec"]["ingress"][0]["from"] == monitoring
    off = objects({"networkPolicy": {"enabled": False}})
    assert not [o for o in off if o["kind"] == "NetworkPolicy"]


def _container(items: list[dict[str, Any]]) -> dict[str, Any]:
    pod = one(items, "Deployment")["spec"]["template"]["spec"]
    assert len(pod["containers"]) == 1
    container: dict[str, Any] = pod["containers"][0]
    return container


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_pod_meets_pod_security_restricted() -> None:
    """The checks of the PSS "restricted" profile that a pod spec can fail."""
    for mode in MODES:
        pod = one(objects(MODES[mode]), "Deployment")["spec"]["template"]["spec"]
        assert not any(pod.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))
        for volume in pod.get("volumes", []):
            assert set(volume) - {"name"} <= {"emptyDir", "configMap", "secret", "projected"}
        for container in pod["containers"]:
            security = {**pod["securityContext"], **container["securityContext"]}
            assert security["runAsNonRoot"] is True
            assert security.get("runAsUser", 1) != 0
            assert security["allowPrivilegeEscalation"] is False
            assert security["capabilities"]["drop"] == ["ALL"]
            assert not security["capabilities"].get("add")
            assert security["seccompProfile"]["type"] in {"RuntimeDefault", "Localhost"}
            assert security["readOnlyRootFilesystem"] is True
            assert "privileged" not in security or security["privileged"] is False
            assert not container.get("ports") or all(
                "hostPort" not in p for p in container["ports"]
            )
            mounts = {m["mountPath"] for m in container["volumeMounts"]}
            assert "/tmp" in mounts  # the only writable place on a read-only root


def test_probes_call_kopfs_health_endpoint() -> None:
    container = _container(objects({"health": {"port": 8181, "path": "/livez"}}))
    assert "--liveness=http://0.0.0.0:8181/livez" in container["args"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("livenessProbe", "readinessProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == "/livez"
        assert ports[get["port"]] == 8181
    assert container["resources"]["requests"]
    assert container["resources"]["limits"]


def test_images_and_prometheus_reach_the_operator() -> None:
    container = _container(objects(MODES["everything-on"]))
    assert container["image"] == "registry.example.com/perf/plimsoll-operator@sha256:" + "a" * 64
    env = _env(container)
    assert env["PLIMSOLL_GENERATOR_IMAGE"] == "registry.example.com/perf/plimsoll-generator:edge"
    assert env["PLIMSOLL_MOCK_IMAGE"] == "registry.example.com/perf/plimsoll-mock:0.1.0"
    assert env["PLIMSOLL_PROMETHEUS_URL"] == "http://prometheus.monitoring:9090"
    assert env["PLIMSOLL_EXTRA"] == "1"
    assert env["PLIMSOLL_MAX_CONCURRENT"] == "3"
    assert env["PLIMSOLL_METRICS_PORT"] == "9090"
    assert container["args"][-1] == "--verbose"


def test_by_default_at_most_8_runs_at_once_in_the_whole_cluster() -> None:
    """The limit "in total" (issue 52): the chart's default, and the operator's own."""
    assert _env(_container(objects()))["PLIMSOLL_MAX_CONCURRENT"] == "8"
    assert "PLIMSOLL_MAX_CONCURRENT" not in os.environ  # else the default below is the env's
    assert inspect.signature(operator_cmd).parameters["max_concurrent"].default == 8


def test_external_targets_reach_the_operator_none_by_default() -> None:
    """Issue 52, item 3: a target.url is opt-in on a cluster; the chart lists none."""
    assert _env(_container(objects()))["PLIMSOLL_EXTERNAL_TARGETS"] == ""
    listed = {"externalTargets": ["shop.example.com", ".staging.example.com", "10.20.0.0/16"]}
    env = _env(_container(objects(listed)))
    assert external_targets_from(env["PLIMSOLL_EXTERNAL_TARGETS"]) == frozenset(
        listed["externalTargets"]
    )


def test_default_images_follow_the_app_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    container = _container(objects())
    assert container["image"] == f"plimsoll-operator:{chart['appVersion']}"
    assert (
        _env(container)["PLIMSOLL_GENERATOR_IMAGE"] == f"plimsoll-generator:{chart['appVersion']}"
    )


def test_watch_scope_reaches_the_operator() -> None:
    cluster = _container(objects())
    assert "--all-namespaces" in cluster["args"]
    namespaced = _container(objects(MODES["namespaced"]))
    assert "--all-namespaces" not in namespaced["args"]
    assert [a for a in namespaced["args"] if a.startswith("--namespace=")] == [
        "--namespace=team-a",
        "--namespace=team-b",
    ]


def test_metrics_wiring() -> None:
    """Service -> pod port, and ServiceMonitor -> Service, select what they must."""
    items = objects(MODES["everything-on"])
    deployment = one(items, "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    container = _container(items)
    service = one(items, "Service")
    assert service["spec"]["selector"].items() <= pod_labels.items()
    port_names = {p["name"] for p in container["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names
    monitor = one(items, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "kps"
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [NAMESPACE]
    assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]


def test_sync_wave_annotates_every_object() -> None:
    for item in objects(MODES["everything-on"]):
        assert item["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "-1"
    for item in objects():
        assert "argocd.argoproj.io/sync-wave" not in item["metadata"].get("annotations", {})


def test_bring_your_own_service_account() -> None:
    items = objects(MODES["bring-your-own-rbac"])
    assert sorted(i["kind"] for i in items) == ["ClusterKopfPeering", "Deployment", "NetworkPolicy"]
    pod = one(items, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "platform-operator"


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"watch": {"scope": "namespaced"}}, "minItems"),
        ({"watch": {"scope": "everywhere"}}, "value must be one of"),
        ({"watchNamespaces": ["a"]}, "additional properties"),
        ({"prometheus": {"url": "prometheus:9090"}}, "/prometheus/url"),
        ({"image": {"repository": "x", "digest": "latest"}}, "/image/digest"),
        ({"externalTargets": ["http://shop.example.com/"]}, "/externalTargets/0"),
    ],
)
def test_schema_rejects_bad_values(values: dict[str, Any], complaint: str) -> None:
    with pytest.raises(helm_python.HelmValuesError, match=complaint):
        render(values)


def test_service_monitor_needs_the_service() -> None:
    values = {"metrics": {"service": {"enabled": False}, "serviceMonitor": {"enabled": True}}}
    with pytest.raises(helm_python.HelmError, match=r"needs metrics\.service\.enabled"):
        render(values)


def test_notes_say_what_to_apply_next() -> None:
    notes = render(MODES["namespaced"])["plimsoll/templates/NOTES.txt"]
    assert "kubectl apply -n team-a -f examples/" in notes
    assert "kubectl get capacitytests -n team-a -w" in notes
    assert "kubectl plimsoll report <name> -n team-a" in notes
    assert "prometheus.url is empty" in notes
    notes = render(MODES["everything-on"])["plimsoll/templates/NOTES.txt"]
    assert "kubectl get capacitytests -A -w" in notes
    assert "prometheus.url is empty" not in notes


def test_release_names_do_not_repeat_the_chart_name() -> None:
    assert one(objects(name="plimsoll"), "Deployment")["metadata"]["name"] == "plimsoll"
    assert one(objects(name="perf"), "Deployment")["metadata"]["name"] == "perf-plimsoll"
    assert len(of_kind(objects(MODES["namespaced"]), "RoleBinding")) == 2


@pytest.mark.parametrize("mode", MODES)
def test_operator_cli_accepts_the_rendered_args(mode: str) -> None:
    """The Deployment's args parse with the real `plimsoll` command line (not run)."""
    import typer

    from plimsoll.cli.app import app

    args = _container(objects(MODES[mode]))["args"]
    group: Any = typer.main.get_command(app)
    assert args[0] == "operator"
    command = group.commands["operator"]
    with command.make_context("operator", list(args[1:])) as ctx:
        parsed = ctx.params
    assert parsed["liveness"].startswith("http://0.0.0.0:")
    assert parsed["all_namespaces"] == (mode != "namespaced")
    env = _env(_container(objects(MODES[mode])))
    assert env["PLIMSOLL_PEERING"] == "plimsoll"  # read by the same command as --peering
    assert 3 <= int(env["PLIMSOLL_PEERING_LIFETIME"]) <= 3600


def test_prometheus_rule_alerts_on_regressions_and_stale_results() -> None:
    values = {"metrics": {"prometheusRule": {"enabled": True, "staleAfter": "36h"}}}
    rule = one(objects(values), "PrometheusRule")
    alerts = {r["alert"]: r for r in rule["spec"]["groups"][0]["rules"]}
    regressed = alerts["PlimsollCapacityRegressed"]
    assert regressed["expr"] == "max by (namespace, name, variant) (plimsoll_regressed) == 1"
    assert "{{ $labels.name }}" in regressed["annotations"]["summary"]
    stale = alerts["PlimsollCapacityResultStale"]
    assert stale["expr"].endswith("(plimsoll_last_success_timestamp_seconds) > 129600")
    assert not [o for o in objects({}) if o["kind"] == "PrometheusRule"]  # off by default


def test_prometheus_rule_names_only_gauges_the_operator_exports() -> None:
    import re

    from plimsoll.controller.operator_metrics import OperatorMetrics

    exported = set(re.findall(r"^# TYPE (\S+)", OperatorMetrics().render(), re.MULTILINE))
    rule = one(objects({"metrics": {"prometheusRule": {"enabled": True}}}), "PrometheusRule")
    for alert in rule["spec"]["groups"][0]["rules"]:
        used = set(re.findall(r"plimsoll_[a-z_]+", alert["expr"]))
        assert used <= exported, alert["alert"]
