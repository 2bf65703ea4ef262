"""A recommended HPA as the manifest a user applies (issue 57): autoscaling/v2, CPU
utilization, the behavior the recommendation set. The Deployment it scales is named by
the caller (the test's name when nothing better is known)."""

from __future__ import annotations

from typing import Any

import yaml

from plimsoll.api.autoscale import Autoscaler, ScalingRules


def _rules(rules: ScalingRules) -> dict[str, Any]:
    out: dict[str, Any] = {"selectPolicy": rules.select_policy.value}
    if rules.stabilization_window_seconds is not None:
        out["stabilizationWindowSeconds"] = rules.stabilization_window_seconds
    if rules.policies:
        out["policies"] = [
            {"type": p.type.value, "value": p.value, "periodSeconds": p.period_seconds}
            for p in rules.policies
        ]
    return out


def hpa_manifest(autoscaler: Autoscaler, deployment: str) -> str:
    """The HorizontalPodAutoscaler for `deployment` with `autoscaler`'s settings, as YAML."""
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment},
        "minReplicas": autoscaler.min_replicas,
        "maxReplicas": autoscaler.max_replicas,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {
                        "type": "Utilization",
                        "averageUtilization": autoscaler.target_cpu_utilization,
                    },
                },
            }
        ],
    }
    behavior = autoscaler.behavior
    if behavior is not None:
        directions = {"scaleUp": behavior.scale_up, "scaleDown": behavior.scale_down}
        spec["behavior"] = {k: _rules(v) for k, v in directions.items() if v is not None}
    manifest = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": deployment},
        "spec": spec,
    }
    return yaml.safe_dump(manifest, sort_keys=False)
