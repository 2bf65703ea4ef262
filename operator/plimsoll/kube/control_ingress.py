"""Who may reach the generators' control port: the NetworkPolicy that admits only the operator.

The control API starts trials and aims the load; the run's token (`control_token_secret`)
authenticates every call, and this policy keeps everyone else from even connecting.
Created with the other policies, before any generator exists.

Where the operator's calls come from decides what can be admitted:

- In the cluster, by pod IP (the chart's default): from pods carrying the operator's
  labels in the operator's namespace (`PLIMSOLL_OPERATOR_POD_LABELS`,
  `PLIMSOLL_OPERATOR_NAMESPACE`, set by the chart). Nothing else.
- Outside the cluster, through the API server's pod proxy, or by pod IP from a host:
  the connection comes from the API server or that host, which a pod selector cannot
  name and whose address the operator does not know. Then the control port is
  admitted from the CIDRs in `PLIMSOLL_CONTROL_CIDRS` (e.g. the API servers'
  addresses), or, when none are given, from any address, and the run's status says
  so: the token is then the only lock.

The kubelet's readiness probe comes from the node, which NetworkPolicy implementations
admit whatever the policy says.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plimsoll.kube import names
from plimsoll.kube.names import RunIdentity

OPEN_CONTROL_WARNING = (
    "the generators' control port is admitted from any address (the operator reaches them "
    "from outside the cluster and PLIMSOLL_CONTROL_CIDRS is unset): only the run's token "
    "guards it"
)


@dataclass(frozen=True)
class ControlClients:
    """Where the operator's control calls come from."""

    namespace: str | None = None  # the operator's namespace, when it runs in a pod
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    cidrs: tuple[str, ...] = ()  # used when it does not (or goes through a proxy)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> ControlClients:
        labels: dict[str, str] = {}
        for pair in env.get("PLIMSOLL_OPERATOR_POD_LABELS", "").split(","):
            if not pair.strip():
                continue
            key, sep, value = pair.strip().partition("=")
            if not sep or not key:
                raise ValueError(
                    f"PLIMSOLL_OPERATOR_POD_LABELS: {pair.strip()!r} is not key=value; "
                    "give the operator pod's labels as k1=v1,k2=v2"
                )
            labels[key] = value
        cidrs = tuple(
            c.strip() for c in env.get("PLIMSOLL_CONTROL_CIDRS", "").split(",") if c.strip()
        )
        namespace = env.get("PLIMSOLL_OPERATOR_NAMESPACE", "").strip() or None
        return cls(namespace, labels, cidrs)

    def sources(self, *, from_a_pod: bool) -> list[dict[str, Any]] | None:
        """The policy's `from` peers; None: any address (nothing narrower is known)."""
        if from_a_pod and self.namespace and self.pod_labels:
            return [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": self.namespace}
                    },
                    "podSelector": {"matchLabels": dict(self.pod_labels)},
                }
            ]
        if self.cidrs:
            return [{"ipBlock": {"cidr": cidr}} for cidr in self.cidrs]
        return None


def generator_ingress_policy(
    run: RunIdentity, peers: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """Generators accept connections only on the control port, only from `peers`."""
    rule: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": names.GENERATOR_PORT}]}
    if peers is not None:
        rule["from"] = peers
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": run.child("generators-ingress"),  # each variant its own
            "namespace": run.namespace,
            "labels": run.labels(),
        },
        "spec": {
            "podSelector": {"matchLabels": run.selector(names.ROLE_GENERATOR)},
            "policyTypes": ["Ingress"],
            "ingress": [rule],
        },
    }
