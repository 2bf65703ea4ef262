"""The chart grants exactly the operator's rules from plimsoll.controller.rbac, placed per mode.

plimsoll.controller.rbac is where the rules are written (tests/controller checks every API
call the operator makes against them, and runs the operator on a real API server with
them); files/rbac-rules.yaml is its rendering and templates/rbac.yaml places the groups:
`cluster` (+ `watched` in cluster mode) in the ClusterRole bound cluster-wide, `runs`
in `<release>-run` which no binding of the chart names (the operator binds it per run
namespace), `report` in `<release>-report` (cluster mode, bound by the operator) or in
each watched namespace's Role (namespaced mode).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from plimsoll.controller import rbac
from tests.charts.helm import CHART, MODES, NAMESPACE, objects, of_kind, one

Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
DANGEROUS = {"pods", "secrets", "configmaps", "pods/proxy", "jobs", "services"}


def _rules(rules: list[dict[str, Any]]) -> list[Rule]:
    """Comparable rules: order of rules and of items inside a rule does not matter."""
    return sorted(
        (tuple(sorted(r["apiGroups"])), tuple(sorted(r["resources"])), tuple(sorted(r["verbs"])))
        for r in rules
    )


def _resources(role: dict[str, Any]) -> set[str]:
    return {r for rule in role["rules"] for r in rule["resources"]}


def _cluster_roles(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in of_kind(items, "ClusterRole")}


def _subjects_are_the_operator(binding: dict[str, Any]) -> None:
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "plimsoll", "namespace": NAMESPACE}
    ]


def test_chart_rules_file_is_plimsoll_rbac() -> None:
    assert (CHART / "files" / "rbac-rules.yaml").read_text() == rbac.render_rules()
    assert yaml.safe_load(rbac.render_rules()) == rbac.RULES


@pytest.mark.parametrize("mode", ["default", "namespaced"])
def test_only_the_operators_own_role_is_bound_and_it_holds_no_pod_or_secret_right(
    mode: str,
) -> None:
    items = objects(MODES[mode])
    roles = _cluster_roles(items)
    binding = one(items, "ClusterRoleBinding")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "plimsoll",
    }
    _subjects_are_the_operator(binding)
    assert not _resources(roles["plimsoll"]) & DANGEROUS
    bound = {
        b["roleRef"]["name"] for b in items if b["kind"] in ("RoleBinding", "ClusterRoleBinding")
    }
    assert not bound & {
        "plimsoll-run",
        "plimsoll-report",
        "plimsoll-references",
        "plimsoll-contract",
    }


@pytest.mark.parametrize("mode", ["default", "namespaced"])
def test_the_operator_may_bind_exactly_its_own_roles(mode: str) -> None:
    roles = _cluster_roles(objects(MODES[mode]))
    [bind] = [r for r in roles["plimsoll"]["rules"] if "bind" in r["verbs"]]
    wanted = ["plimsoll-run"]
    if mode != "namespaced":
        wanted += ["plimsoll-report", "plimsoll-references", "plimsoll-contract"]
    assert (bind["resources"], bind["verbs"], bind["resourceNames"]) == (
        ["clusterroles"],
        ["bind"],
        wanted,
    )
    assert set(roles) == {"plimsoll", *wanted}


def test_cluster_mode_places_each_group() -> None:
    roles = _cluster_roles(objects())
    assert _rules(roles["plimsoll"]["rules"]) == _rules(
        rbac.RULES["cluster"] + rbac.RULES["watched"]
    )
    assert _rules(roles["plimsoll-run"]["rules"]) == _rules(rbac.RULES["runs"])
    assert _rules(roles["plimsoll-report"]["rules"]) == _rules(rbac.RULES["report"])
    assert _rules(roles["plimsoll-references"]["rules"]) == _rules(rbac.RULES["references"])
    assert _rules(roles["plimsoll-contract"]["rules"]) == _rules(rbac.RULES["contract"])
    assert not of_kind(objects(), "Role")
    assert not of_kind(objects(), "RoleBinding")


def test_namespaced_mode_grants_capacity_tests_and_reports_only_in_listed_namespaces() -> None:
    items = objects(MODES["namespaced"])
    roles = _cluster_roles(items)
    assert _rules(roles["plimsoll"]["rules"]) == _rules(
        rbac.RULES["cluster"] + rbac.RULES["namespaced"]
    )
    assert not any("plimsoll.dev" in rule["apiGroups"] for rule in roles["plimsoll"]["rules"])
    assert _rules(roles["plimsoll-run"]["rules"]) == _rules(rbac.RULES["runs"])
    namespaced = {r["metadata"]["namespace"]: r for r in of_kind(items, "Role")}
    bindings = {b["metadata"]["namespace"]: b for b in of_kind(items, "RoleBinding")}
    assert set(namespaced) == set(bindings) == {"team-a", "team-b"}
    for namespace, role in namespaced.items():
        assert _rules(role["rules"]) == _rules(
            rbac.RULES["watched"]
            + rbac.RULES["report"]
            + rbac.RULES["references"]
            + rbac.RULES["contract"]
        )
        binding = bindings[namespace]
        assert binding["roleRef"]["kind"] == "Role"
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        _subjects_are_the_operator(binding)


def test_pod_proxy_is_granted_only_when_asked_for() -> None:
    assert "pods/proxy" not in _resources(_cluster_roles(objects())["plimsoll-run"])
    proxied = _cluster_roles(objects({"rbac": {"podProxy": True}}))["plimsoll-run"]
    assert _rules(proxied["rules"]) == _rules(rbac.RULES["runs"] + rbac.RULES["proxy"])


@pytest.mark.parametrize("mode", ["default", "namespaced"])
def test_the_operator_is_told_who_it_is_and_what_it_binds(mode: str) -> None:
    items = objects(MODES[mode])
    container = one(items, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["PLIMSOLL_SERVICE_ACCOUNT"] == "plimsoll"
    assert env["PLIMSOLL_SERVICE_ACCOUNT_NAMESPACE"] == NAMESPACE
    assert env["PLIMSOLL_RUN_ROLE"] == "plimsoll-run"
    assert env["PLIMSOLL_REPORT_ROLE"] == ("" if mode == "namespaced" else "plimsoll-report")
    references = "" if mode == "namespaced" else "plimsoll-references"
    assert env["PLIMSOLL_REFERENCES_ROLE"] == references
    contract = "" if mode == "namespaced" else "plimsoll-contract"
    assert env["PLIMSOLL_CONTRACT_ROLE"] == contract


def test_every_rule_is_granted_somewhere() -> None:
    """Nothing beyond plimsoll.controller.rbac, nothing of it left out."""
    granted: list[dict[str, Any]] = []
    for values in (MODES["default"], MODES["namespaced"], {"rbac": {"podProxy": True}}):
        items = objects(values)
        for role in of_kind(items, "ClusterRole"):
            granted += [
                {k: v for k, v in rule.items() if k != "resourceNames"} for rule in role["rules"]
            ]
    assert {str(r) for r in _rules(granted)} == {
        str(r) for r in _rules([r for group in rbac.RULES.values() for r in group])
    }


def test_the_operator_pod_carries_the_labels_the_control_policy_admits() -> None:
    deployment = one(objects(), "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["PLIMSOLL_OPERATOR_NAMESPACE"] == NAMESPACE
    wanted = dict(pair.split("=") for pair in env["PLIMSOLL_OPERATOR_POD_LABELS"].split(","))
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert wanted.items() <= pod_labels.items()
    assert len(wanted) == 2


def _policy(values: dict[str, Any]) -> dict[str, Any]:
    items = objects(values)
    policy = one(items, "ValidatingAdmissionPolicy")
    binding = one(items, "ValidatingAdmissionPolicyBinding")
    assert binding["spec"] == {
        "policyName": policy["metadata"]["name"],
        "validationActions": ["Deny"],
    }
    [who] = policy["spec"]["matchConditions"]
    assert who["expression"] == (
        f"request.userInfo.username == 'system:serviceaccount:{NAMESPACE}:plimsoll'"
    )
    return policy


def test_the_admission_policy_is_on_by_default_and_covers_every_bindable_role() -> None:
    """The CEL itself is proven on the real API server (tests/controller/test_apiserver_rbac.py);
    here: on by default, off only when asked, and each role and namespace list in place."""
    assert not [
        o
        for o in objects({"rbac": {"admissionPolicy": False}})
        if o["kind"].startswith("ValidatingAdmissionPolicy")
    ]
    _, run, serving, deployments, created, subjects = _policy({})["spec"]["validations"]
    assert "'plimsoll-run'" in run["expression"]
    assert "namespaceObject" in run["expression"]
    assert '["plimsoll-report","plimsoll-references","plimsoll-contract"]' in serving["expression"]
    protected = '["kube-system","kube-public","kube-node-lease","plimsoll-system"]'
    assert f"!(request.namespace in {protected})" in serving["expression"]
    assert "kube-system" in serving["message"]
    # Issue 58, item 5: a Deployment changed only in its plimsoll.dev/ annotations.
    assert "object.spec == oldObject.spec" in deployments["expression"]
    assert "plimsoll.dev/" in deployments["message"]
    # Issue 52, item 5: a namespace created or changed stays its own and restricted, and a
    # binding has the operator itself as its only subject.
    assert "request.operation == 'DELETE'" in created["expression"]
    assert "'pod-security.kubernetes.io/enforce'] == 'restricted'" in created["expression"]
    assert "object.subjects[0].name == 'plimsoll'" in subjects["expression"]
    assert "object.subjects[0].namespace == 'plimsoll-system'" in subjects["expression"]


def test_the_namespaced_admission_policy_allows_the_serving_roles_only_where_it_watches() -> None:
    _, _, serving, *_ = _policy(MODES["namespaced"])["spec"]["validations"]
    assert serving["expression"].endswith('|| request.namespace in ["team-a","team-b"]')
    assert serving["message"].endswith("only in the namespaces it watches")


def test_protected_namespaces_are_the_admins_list_plus_the_release_namespace() -> None:
    values = {"rbac": {"protectedNamespaces": ["istio-system"]}}
    _, _, serving, *_ = _policy(values)["spec"]["validations"]
    assert '!(request.namespace in ["istio-system","plimsoll-system"])' in serving["expression"]
