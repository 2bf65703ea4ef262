"""The generators' control port admits only the operator: the policy per where it runs."""

from __future__ import annotations

import kubernetes_validate
import pytest

from plimsoll.kube import names
from plimsoll.kube.control_ingress import ControlClients, generator_ingress_policy
from tests.kube.test_manifests import K8S_VERSION, RUN

CHART_ENV = {
    "PLIMSOLL_OPERATOR_NAMESPACE": "plimsoll-system",
    "PLIMSOLL_OPERATOR_POD_LABELS": "app.kubernetes.io/name=plimsoll,"
    "app.kubernetes.io/instance=plimsoll",
}


def test_in_the_cluster_only_the_operators_pods_in_its_namespace_are_admitted() -> None:
    peers = ControlClients.from_env(CHART_ENV).sources(from_a_pod=True)
    policy = generator_ingress_policy(RUN, peers)
    kubernetes_validate.validate(policy, K8S_VERSION, strict=True)
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    assert policy["spec"]["podSelector"]["matchLabels"] == RUN.selector(names.ROLE_GENERATOR)
    [rule] = policy["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": names.GENERATOR_PORT}]
    # One peer with both selectors: the operator's labels AND its namespace, not either.
    assert rule["from"] == [
        {
            "namespaceSelector": {
                "matchLabels": {"kubernetes.io/metadata.name": "plimsoll-system"}
            },
            "podSelector": {
                "matchLabels": {
                    "app.kubernetes.io/name": "plimsoll",
                    "app.kubernetes.io/instance": "plimsoll",
                }
            },
        }
    ]


def test_from_outside_the_cluster_the_given_cidrs_or_any_address() -> None:
    outside = ControlClients.from_env(
        {**CHART_ENV, "PLIMSOLL_CONTROL_CIDRS": "10.0.0.1/32, fd00::1/128"}
    )
    assert outside.sources(from_a_pod=False) == [
        {"ipBlock": {"cidr": "10.0.0.1/32"}},
        {"ipBlock": {"cidr": "fd00::1/128"}},
    ]
    assert ControlClients.from_env(CHART_ENV).sources(from_a_pod=False) is None
    anyone = generator_ingress_policy(RUN, None)
    kubernetes_validate.validate(anyone, K8S_VERSION, strict=True)
    assert anyone["spec"]["ingress"] == [
        {"ports": [{"protocol": "TCP", "port": names.GENERATOR_PORT}]}
    ]  # still only the control port


def test_without_the_operators_labels_a_pod_is_not_trusted_by_namespace_alone() -> None:
    only_namespace = ControlClients.from_env({"PLIMSOLL_OPERATOR_NAMESPACE": "ops"})
    assert only_namespace.sources(from_a_pod=True) is None


def test_malformed_labels_are_refused_naming_the_variable() -> None:
    with pytest.raises(ValueError, match="PLIMSOLL_OPERATOR_POD_LABELS: 'app' is not key=value"):
        ControlClients.from_env({"PLIMSOLL_OPERATOR_POD_LABELS": "app"})
