"""The run's NetworkPolicies: what the run's pods may reach (their own namespace and
the cluster's DNS; the generators only the target and the mocks) and who may reach them
(only pods of the run's namespace). Pure, like `plimsoll.kube.manifests`; created by the
Kubernetes platform right after the namespace's bounds, before any pod."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.urls import redact_url
from plimsoll.kube import names
from plimsoll.kube.manifests import meta
from plimsoll.kube.names import RunIdentity

_DNS = {
    "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}}],
    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
}


def _egress_policy(
    run: RunIdentity, name: str, selector: dict[str, Any], egress: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta(run, name, None),
        "spec": {"podSelector": selector, "policyTypes": ["Egress"], "egress": egress},
    }


def run_egress_policy(run: RunIdentity) -> dict[str, Any]:
    """Everything in the run's namespace but the generators may reach only its own
    namespace and the cluster's DNS: a target image that acts as a proxy cannot relay
    the load, and the target, mock and services cannot call out. (Generators have their
    own, narrower policy; policies add up, so they are left out of this one.)"""
    not_generators = {
        "matchExpressions": [
            {"key": names.LABEL_ROLE, "operator": "NotIn", "values": [names.ROLE_GENERATOR]}
        ]
    }
    inside: dict[str, Any] = {"to": [{"podSelector": {}}]}
    return _egress_policy(run, run.child(names.RUN_EGRESS_POLICY), not_generators, [inside, _DNS])


def run_ingress_policy(run: RunIdentity) -> dict[str, Any]:
    """Every pod in the run's namespace accepts connections only from pods of that
    namespace: another tenant's pods cannot reach (or load) the target, the mock or the
    services, and nothing outside can skew a trial. The operator's calls to the
    generators' control port are admitted by their own policy (`generators-ingress`;
    policies add up), and the kubelet's probes come from the node, which NetworkPolicy
    implementations admit whatever a policy says. On Kubernetes nothing else needs in:
    Prometheus reads the pods' CPU and memory from the kubelet's cAdvisor."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta(run, run.child(names.RUN_INGRESS_POLICY), None),
        "spec": {
            "podSelector": {},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": {}}]}],
        },
    }


def _external_target(spec: CapacityTestSpec) -> dict[str, Any] | None:
    """The egress rule for a `target.url` outside the run: its address when the URL names
    an IP, else its port on any address (a NetworkPolicy cannot name a host)."""
    if spec.target.url is None:
        return None
    parsed = urlsplit(spec.target.url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    ports = [{"protocol": "TCP", "port": port}]
    try:
        address = ipaddress.ip_address(parsed.hostname or "")
    except ValueError:
        return {"ports": ports}
    bits = 32 if address.version == 4 else 128
    return {"to": [{"ipBlock": {"cidr": f"{address}/{bits}"}}], "ports": ports}


def external_target_warning(spec: CapacityTestSpec) -> str | None:
    """Said when the generators' egress can only be narrowed to a port, not a host."""
    rule = _external_target(spec)
    if rule is not None and "to" not in rule:
        return (
            f"target.url {redact_url(spec.target.url or '')} names a host, not an IP: the "
            f"generators' egress is limited to port {rule['ports'][0]['port']} on any address"
        )
    return None


def generator_network_policy(run: RunIdentity, spec: CapacityTestSpec) -> dict[str, Any]:
    """Generators may reach only the target (or `target.url`'s address) and the mock, and
    the cluster's DNS; nothing else."""

    def to(role: str, *ports: int) -> dict[str, Any]:
        return {
            "to": [{"podSelector": {"matchLabels": run.selector(role)}}],
            "ports": [{"protocol": "TCP", "port": port} for port in ports],
        }

    external = _external_target(spec)
    targets = [external] if external is not None else [to(names.ROLE_TARGET, spec.target.port)]
    floor = names.floor_port(spec.upstream.port, spec.upstream.image)
    mock_ports = [spec.upstream.port] if floor is None else [spec.upstream.port, floor]
    egress = [*targets, to(names.ROLE_MOCK, *mock_ports), _DNS]
    return _egress_policy(
        run,
        run.child(names.GENERATORS_EGRESS_POLICY),
        {"matchLabels": run.selector(names.ROLE_GENERATOR)},
        egress,
    )
