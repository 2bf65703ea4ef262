"""A recommended HPA as the manifest a user applies (issue 57): autoscaling/v2, CPU
utilization, the behavior the recommendation set (`api.autoscale.hpa_spec`, the spec the
Kubernetes platform applies for a flight too). The Deployment it scales is named by the
caller (the test's name when nothing better is known)."""

from __future__ import annotations

import yaml

from plimsoll.api.autoscale import Autoscaler, hpa_spec


def hpa_manifest(autoscaler: Autoscaler, deployment: str) -> str:
    """The HorizontalPodAutoscaler for `deployment` with `autoscaler`'s settings, as YAML."""
    manifest = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": deployment},
        "spec": hpa_spec(autoscaler, deployment),
    }
    return yaml.safe_dump(manifest, sort_keys=False)
