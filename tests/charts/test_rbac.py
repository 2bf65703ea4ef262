"""The chart grants exactly the operator's rules from plimsoll.controller.rbac, placed per mode.

plimsoll.controller.rbac is where the rules are written (tests/controller checks every API
call the operator makes against them); files/rbac-rules.yaml is its rendering
and templates/rbac.yaml binds the groups: all in one ClusterRole cluster-wide;
in namespaced mode `watched` as a Role in each listed namespace only.
"""

from __future__ import annotations

from typing import Any

import yaml

from plimsoll.controller import rbac
from tests.charts.helm import CHART, MODES, NAMESPACE, objects, of_kind, one

Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _rules(rules: list[dict[str, Any]]) -> list[Rule]:
    """Comparable rules: order of rules and of items inside a rule does not matter."""
    return sorted(
        (tuple(sorted(r["apiGroups"])), tuple(sorted(r["resources"])), tuple(sorted(r["verbs"])))
        for r in rules
    )


def _subjects_are_the_operator(binding: dict[str, Any]) -> None:
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "plimsoll", "namespace": NAMESPACE}
    ]


def test_chart_rules_file_is_plimsoll_rbac() -> None:
    assert (CHART / "files" / "rbac-rules.yaml").read_text() == rbac.render_rules()
    assert yaml.safe_load(rbac.render_rules()) == rbac.RULES


def test_cluster_mode_grants_every_rule_in_one_cluster_role() -> None:
    items = objects()
    role = one(items, "ClusterRole")
    everything = rbac.RULES["cluster"] + rbac.RULES["watched"] + rbac.RULES["runs"]
    assert _rules(role["rules"]) == _rules(everything)
    binding = one(items, "ClusterRoleBinding")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": role["metadata"]["name"],
    }
    _subjects_are_the_operator(binding)
    assert not of_kind(items, "Role")
    assert not of_kind(items, "RoleBinding")


def test_namespaced_mode_grants_capacity_tests_only_in_listed_namespaces() -> None:
    items = objects(MODES["namespaced"])
    cluster_role = one(items, "ClusterRole")
    assert _rules(cluster_role["rules"]) == _rules(rbac.RULES["cluster"] + rbac.RULES["runs"])
    assert not any("plimsoll.dev" in rule["apiGroups"] for rule in cluster_role["rules"])
    _subjects_are_the_operator(one(items, "ClusterRoleBinding"))
    roles = {r["metadata"]["namespace"]: r for r in of_kind(items, "Role")}
    bindings = {b["metadata"]["namespace"]: b for b in of_kind(items, "RoleBinding")}
    assert set(roles) == set(bindings) == {"team-a", "team-b"}
    for namespace, role in roles.items():
        assert _rules(role["rules"]) == _rules(rbac.RULES["watched"])
        binding = bindings[namespace]
        assert binding["roleRef"]["kind"] == "Role"
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        _subjects_are_the_operator(binding)


def test_every_rule_is_granted_exactly_once_per_scope() -> None:
    """Nothing beyond plimsoll.controller.rbac: the union of what each mode grants is its rules."""
    for mode in ("default", "namespaced"):
        items = objects(MODES[mode])
        granted: list[dict[str, Any]] = list(one(items, "ClusterRole")["rules"])
        roles = of_kind(items, "Role")
        if roles:
            granted += roles[0]["rules"]
        assert _rules(granted) == _rules([r for group in rbac.RULES.values() for r in group])
