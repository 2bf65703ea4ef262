"""The cluster admin's allow-lists for what a target's `podTemplate` may place and label.

The model (`plimsoll.api.pod_template`) refuses what no cluster should let a tenant set
(a privileged container, the host's namespaces, a control-plane node, a system priority).
What remains is placement and metadata that are fine on one cluster and harmful on
another, so the admin names what is allowed, and by default nothing is:

- a `priorityClassName` preempts other teams' pods: only the admin's `priorityClasses`;
- a toleration places the target on dedicated, GPU or cordoned nodes: only the keys in
  `tolerationKeys`;
- `nodeSelector` and node affinity choose nodes by label: only the keys in `nodeLabels`,
  by default the well-known labels of a class of nodes (zone, region, instance type,
  architecture, OS), never one node by name (`kubernetes.io/hostname`) or a node's role;
- labels and annotations are read by mutating webhooks and by the kubelet (an AppArmor
  `unconfined` annotation): only keys under the admin's `metadataPrefixes`.

The operator applies it before creating anything (`plimsoll.kube.run_policy`, where
`plimsoll validate` applies it too), and each problem names the chart value to set.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Labels every Kubernetes node carries that choose a kind of node, not a node.
CLASS_OF_NODE_LABELS = frozenset(
    {
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
    }
)
_VALUES = "the chart's podTemplate values"


@dataclass(frozen=True)
class TemplatePolicy:
    """The chart's `podTemplate` values: what a CR's `target.podTemplate` may use."""

    priority_classes: frozenset[str] = frozenset()
    toleration_keys: frozenset[str] = frozenset()
    node_labels: frozenset[str] = CLASS_OF_NODE_LABELS
    metadata_prefixes: tuple[str, ...] = ()

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> TemplatePolicy:
        """From the chart's `podTemplate` mapping; an unknown key or a value that is not a
        list of strings raises ValueError naming it."""
        known = {
            "priorityClasses": "priority_classes",
            "tolerationKeys": "toleration_keys",
            "nodeLabels": "node_labels",
            "metadataPrefixes": "metadata_prefixes",
        }
        parsed: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known:
                raise ValueError(f"podTemplate.{key}: not a setting; known: {', '.join(known)}")
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"podTemplate.{key}: must be a list of names")
            name = known[key]
            parsed[name] = tuple(value) if name == "metadata_prefixes" else frozenset(value)
        return cls(**parsed)


def _node_label_keys(spec: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(path, label key) of every node label the template selects nodes by."""
    keys: list[tuple[str, str]] = []
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        keys.extend((f"spec.nodeSelector.{key}", key) for key in selector)
    affinity = spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    stack: list[Any] = [node]
    while stack:  # every matchExpressions / matchFields entry, at any depth
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("key"), str):
                keys.append(("spec.affinity.nodeAffinity", item["key"]))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return keys


def template_policy_problems(
    template: Mapping[str, Any] | None, policy: TemplatePolicy, root: str
) -> list[str]:
    """Every part of a (model-valid) pod template the admin did not allow, each with its
    path under `root` and the chart value that would allow it."""
    if not template:
        return []
    problems: list[str] = []
    metadata = template.get("metadata") or {}
    for kind in ("labels", "annotations"):
        for key in metadata.get(kind) or {}:
            if not any(key.startswith(prefix) for prefix in policy.metadata_prefixes):
                allowed = ", ".join(policy.metadata_prefixes) or "none"
                problems.append(
                    f"{root}.metadata.{kind}.{key}: not under a prefix the cluster's admin "
                    f"allows (allowed: {allowed}); webhooks and the kubelet act on labels "
                    f"and annotations, so the admin lists them in {_VALUES} "
                    "(podTemplate.metadataPrefixes)"
                )
    spec = template.get("spec") or {}
    priority = spec.get("priorityClassName")
    if isinstance(priority, str) and priority not in policy.priority_classes:
        problems.append(
            f"{root}.spec.priorityClassName: {priority!r} is not a priority class the "
            "cluster's admin allows (it could preempt other teams' pods); allowed: "
            f"{', '.join(sorted(policy.priority_classes)) or 'none'} "
            f"({_VALUES}: podTemplate.priorityClasses)"
        )
    for index, toleration in enumerate(spec.get("tolerations") or []):
        key = toleration.get("key") if isinstance(toleration, dict) else None
        if key not in policy.toleration_keys:
            problems.append(
                f"{root}.spec.tolerations[{index}].key: {key!r} is not a taint the cluster's "
                "admin lets tests tolerate (dedicated, GPU or cordoned nodes); allowed: "
                f"{', '.join(sorted(policy.toleration_keys)) or 'none'} "
                f"({_VALUES}: podTemplate.tolerationKeys)"
            )
    seen: set[tuple[str, str]] = set()
    for path, key in _node_label_keys(spec):
        if key in policy.node_labels or (path, key) in seen:
            continue
        seen.add((path, key))
        problems.append(
            f"{root}.{path}: chooses nodes by {key!r}, which the cluster's admin does not "
            f"allow (one node by name, or a node's role); allowed: "
            f"{', '.join(sorted(policy.node_labels)) or 'none'} "
            f"({_VALUES}: podTemplate.nodeLabels)"
        )
    return problems
