"""What every resource's daemon shares: the API client, the operator's options and
limits, the run slots and their queue, the metrics. One per operator process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plimsoll.controller.operator_metrics import OperatorMetrics
from plimsoll.controller.skipped_objects import SkipReporter
from plimsoll.decide.pod_template_policy import TemplatePolicy
from plimsoll.decide.run_limits import RunLimits
from plimsoll.decide.run_queue import QueueDecision, Running, Waiting, decide_queue
from plimsoll.kube.client import KubeClient
from plimsoll.kube.run_policy import ClusterPolicy
from plimsoll.platforms.kubernetes.options import KubernetesOptions


@dataclass
class OperatorContext:
    """Shared by every resource's daemon: the API client, options, slots, metrics."""

    client: KubeClient | None = None
    options: KubernetesOptions = field(default_factory=KubernetesOptions)
    max_concurrent: int = 0  # 0: no limit
    metrics: OperatorMetrics = field(default_factory=OperatorMetrics)
    metrics_host: str = "0.0.0.0"
    metrics_port: int = 0  # 0: no metrics server
    metrics_server: Any = None
    running: dict[str, str | None] = field(default_factory=dict)  # uid: the lock it holds
    waiting: dict[str, Waiting] = field(default_factory=dict)
    # The cluster admin's limits (the chart's `limits`): a spec past one is invalid.
    limits: RunLimits = field(default_factory=RunLimits)
    # What a podTemplate may place and label (the chart's `podTemplate`).
    template_policy: TemplatePolicy = field(default_factory=TemplatePolicy)
    namespaces: dict[str, str] = field(default_factory=dict)  # running uid: its namespace
    # Objects kopf's session could not decode: logged and announced once each.
    skipped: SkipReporter = field(init=False)

    def __post_init__(self) -> None:
        self.skipped = SkipReporter(lambda: self.client)

    def policy(self) -> ClusterPolicy:
        """The checks beyond the model, as this operator's settings make them."""
        options = self.options
        prometheus = {*options.allowed_prometheus}
        if options.prometheus_url:
            prometheus.add(options.prometheus_url)
        server = self.client.server if self.client is not None else ""
        host = server.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0].strip("[]")
        return ClusterPolicy(
            limits=self.limits,
            prometheus_urls=frozenset(prometheus),
            allowed_target_hosts=options.allowed_target_hosts,
            external_targets=options.external_targets,
            api_server_hosts=frozenset({host} if host else ()),
            pod_template=self.template_policy,
            images=options.images,
        )

    def api(self) -> KubeClient:
        if self.client is None:
            raise RuntimeError("the operator has not logged in to the API server yet")
        return self.client

    def try_start(self, entry: Waiting) -> QueueDecision:
        """Join the queue (or stay in it) and start when `decide_queue` says so. Every
        daemon runs on one event loop and nothing here awaits, so two daemons never
        take the same slot."""
        self.waiting[entry.uid] = entry
        running = [
            Running(uid, key, self.namespaces.get(uid, "")) for uid, key in self.running.items()
        ]
        per_namespace = self.limits.runs_per_namespace
        decisions = decide_queue(self.waiting.values(), running, self.max_concurrent, per_namespace)
        decision = decisions[entry.uid]
        if decision.start:
            del self.waiting[entry.uid]
            self.running[entry.uid] = entry.lock_key
            self.namespaces[entry.uid] = entry.name.split("/", 1)[0]
        return decision

    def leave(self, uid: str) -> None:
        """Free the slot (and lock) a run held, or its place in the queue."""
        self.waiting.pop(uid, None)
        self.running.pop(uid, None)
        self.namespaces.pop(uid, None)
