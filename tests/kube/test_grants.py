"""Who the operator is, from the chart's environment, and the RoleBinding it makes.

The binding's effect is proven on the real API server (tests/controller/test_apiserver_rbac.py);
here: the identity's parsing and its clear error, and the binding's shape.
"""

from __future__ import annotations

import pytest

from plimsoll.kube.grants import GrantError, OperatorIdentity, role_binding

CHART_ENV = {
    "PLIMSOLL_SERVICE_ACCOUNT": "plimsoll",
    "PLIMSOLL_SERVICE_ACCOUNT_NAMESPACE": "plimsoll-system",
    "PLIMSOLL_RUN_ROLE": "plimsoll-run",
    "PLIMSOLL_REPORT_ROLE": "",
}


def test_the_chart_environment_names_the_operator_and_its_roles() -> None:
    identity = OperatorIdentity.from_env(CHART_ENV)
    assert identity == OperatorIdentity("plimsoll", "plimsoll-system", "plimsoll-run", None)
    with_report = OperatorIdentity.from_env({**CHART_ENV, "PLIMSOLL_REPORT_ROLE": "x-report"})
    assert with_report is not None
    assert with_report.report_role == "x-report"


def test_no_environment_means_no_bindings() -> None:
    assert OperatorIdentity.from_env({}) is None


def test_a_partial_environment_is_refused_naming_the_variables() -> None:
    with pytest.raises(GrantError, match="PLIMSOLL_RUN_ROLE go together"):
        OperatorIdentity.from_env({"PLIMSOLL_SERVICE_ACCOUNT": "plimsoll"})


def test_the_binding_names_the_cluster_role_and_the_operator_only() -> None:
    identity = OperatorIdentity("op", "ops", "op-run")
    body = role_binding(identity, "run-1", "op-run", {"plimsoll.dev/run": "1"})
    assert body["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "op-run",
    }
    assert body["subjects"] == [{"kind": "ServiceAccount", "name": "op", "namespace": "ops"}]
    assert body["metadata"] == {
        "name": "op-run",
        "namespace": "run-1",
        "labels": {"plimsoll.dev/run": "1"},
    }
