"""How the operator runs a run's pods: its images, how it reaches the generators, the
Prometheus and target addresses it allows, its identity and the admin's limits. Read
once at start-up (`plimsoll.cli.operator`) and handed to every `KubernetesPlatform`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from plimsoll.decide.run_limits import RunLimits
from plimsoll.kube.control_ingress import ControlClients
from plimsoll.kube.grants import OperatorIdentity
from plimsoll.kube.names import Images

REACH_POD_IP = "pod-ip"
REACH_PROXY = "proxy"
REACH_AUTO = "auto"


def in_cluster() -> bool:
    return "KUBERNETES_SERVICE_HOST" in os.environ


@dataclass(frozen=True)
class KubernetesOptions:
    images: Images = field(default_factory=Images)
    reach: str = REACH_AUTO  # how the runner reaches generators: pod IP, or the API proxy
    prometheus_url: str | None = None  # the operator's default when the spec names none
    allowed_prometheus: frozenset[str] = frozenset()  # others a spec may name
    # Hosts a target.url may name although they are link-local, loopback or the API server.
    allowed_target_hosts: frozenset[str] = frozenset()
    # Where a target.url may point at all (decide/target_policy.py): none by default.
    external_targets: frozenset[str] = frozenset()
    # Who the operator is and which ClusterRole it binds in each run namespace; None:
    # it binds nothing and relies on its own rights (a developer's admin kubeconfig).
    identity: OperatorIdentity | None = None
    control_clients: ControlClients = field(default_factory=ControlClients)
    ready_timeout: float = 180.0
    poll: float = 0.5
    # The admin's limits on one run (the chart's `limits`), already held to by the spec
    # when the run was admitted; here for the trials the spec did not name.
    limits: RunLimits = field(default_factory=RunLimits)

    def uses_proxy(self) -> bool:
        return self.reach == REACH_PROXY or (self.reach == REACH_AUTO and not in_cluster())

    def control_peers(self) -> list[dict[str, Any]] | None:
        """Who may call the generators' control API (`generator_ingress_policy`). By pod
        IP from inside the cluster the caller is the operator's pod; through the proxy, or
        from a host, it is an address a pod selector cannot name."""
        from_a_pod = in_cluster() and not self.uses_proxy()
        return self.control_clients.sources(from_a_pod=from_a_pod)
