"""Render the Plimsoll chart with the real Helm engine and hand back its objects.

Used by the chart tests. `helm_python` embeds Helm 4 (no binary, no cluster):
what it renders is what `helm install` would send, minus the CRDs in crds/,
which Helm applies before the templates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import helm_python
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "plimsoll"
RELEASE = "plimsoll"
NAMESPACE = "plimsoll-system"

# The modes the chart offers, as the values that select them.
MODES: dict[str, dict[str, Any]] = {
    "default": {},
    "namespaced": {"watch": {"scope": "namespaced", "namespaces": ["team-a", "team-b"]}},
    "everything-on": {
        "imageRegistry": "registry.example.com/perf/",
        "image": {"digest": "sha256:" + "a" * 64},
        "generator": {"image": {"repository": "plimsoll-generator", "tag": "edge"}},
        "prometheus": {"url": "http://prometheus.monitoring:9090"},
        "metrics": {
            "serviceMonitor": {"enabled": True, "labels": {"release": "kps"}},
            "prometheusRule": {"enabled": True, "staleAfter": "36h", "labels": {"release": "kps"}},
            "grafanaDashboard": {"enabled": True, "namespace": "monitoring"},
        },
        "argocd": {"syncWave": "-1"},
        "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x"}},
        "extraArgs": ["--verbose"],
        "maxConcurrentRuns": 3,
        "extraEnv": [{"name": "PLIMSOLL_EXTRA", "value": "1"}],
        "tolerations": [{"key": "perf", "operator": "Exists", "effect": "NoSchedule"}],
    },
    "bring-your-own-rbac": {
        "rbac": {"create": False},
        "serviceAccount": {"create": False, "name": "platform-operator"},
        "metrics": {"service": {"enabled": False}},
    },
}


def render(values: dict[str, Any] | None = None, *, name: str = RELEASE) -> dict[str, str]:
    """Template path -> rendered text (NOTES.txt included)."""
    chart = helm_python.Chart.load(CHART)
    return chart.render(values or {}, name=name, namespace=NAMESPACE)


def rendered(values: dict[str, Any] | None = None, *, name: str = RELEASE) -> list[dict[str, Any]]:
    """Every object the chart renders for these values, its hooks included."""
    found: list[dict[str, Any]] = []
    for path, text in sorted(render(values, name=name).items()):
        if path.endswith("NOTES.txt"):
            continue
        found.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return found


def is_hook(item: dict[str, Any]) -> bool:
    return "helm.sh/hook" in ((item.get("metadata") or {}).get("annotations") or {})


def objects(values: dict[str, Any] | None = None, *, name: str = RELEASE) -> list[dict[str, Any]]:
    """The objects `helm install` applies as the release (hooks, such as `helm test`'s,
    are applied only when their moment comes: `hooks`)."""
    return [item for item in rendered(values, name=name) if not is_hook(item)]


def hooks(values: dict[str, Any] | None = None, *, name: str = RELEASE) -> list[dict[str, Any]]:
    """The chart's hook objects (`helm test`'s), in the order Helm applies them."""
    found = [item for item in rendered(values, name=name) if is_hook(item)]
    return sorted(found, key=lambda i: int(i["metadata"]["annotations"]["helm.sh/hook-weight"]))


def of_kind(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [item for item in items if item["kind"] == kind]


def one(items: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    matching = of_kind(items, kind)
    assert len(matching) == 1, f"expected one {kind}, found {len(matching)}"
    return matching[0]
