"""The operator's RBAC rules, written once: the Helm chart renders them, a test checks them.

The groups, as `charts/plimsoll/templates/rbac.yaml` grants them:
- `cluster`: cluster-wide in both modes: each run's namespace, kopf's discovery, the
  ClusterKopfPeering that keeps one replica active when watching every namespace,
  and making RoleBindings to the run (and report, references) ClusterRoles, which it
  may `bind`; `namespaced` adds watching Namespaces in namespaced mode (kopf);
- `watched`: where CapacityTests live (the resource, its status, events, and in
  namespaced mode each one's KopfPeering):
  cluster-wide, or a Role in each watched namespace;
- `report`: the report ConfigMap: in that Role (namespaced), or a ClusterRole the
  operator binds in a CapacityTest's namespace before writing (cluster-wide);
- `runs`: the `<release>-run` ClusterRole, bound by the operator itself in each run
  namespace it creates, never cluster-wide (`plimsoll.kube.grants`);
- `references`: reading what `valueFrom` names: in that Role (namespaced), or a
  ClusterRole bound in a CapacityTest's namespace when its spec has one;
- `contract`: annotating the Deployment the target copies (`contract.annotate`): in
  that Role (namespaced), or a ClusterRole bound where a CapacityTest asks for it;
- `proxy`: `pods/proxy`, added to the run role only when the operator reaches the
  generators through the API server (`rbac.podProxy`).
`tests/controller` runs the operator on a real API server as the chart's
ServiceAccount, with exactly these rules, cluster-wide and namespaced, and fails
on any 403; against the emulated cluster (the pod-proxy test) it checks each
recorded call with `allows`. A call added without its rule fails a test instead
of a production install.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

import yaml

# What the operator does to the objects of a run: write them with server-side apply (a
# patch, which creates what is absent), read them back (adoption, readiness), list them
# by label (clean-up) and delete them. No update or watch.
_RUN_VERBS = ["create", "get", "list", "patch", "delete"]

RULES: dict[str, list[dict[str, Any]]] = {
    # Cluster-wide, in both modes (a ClusterRoleBinding).
    "cluster": [
        {
            "apiGroups": [""],
            "resources": ["namespaces"],
            # patch: the run namespace is written with server-side apply (which puts
            # back the Pod Security labels of an adopted one). delete: RBAC cannot
            # narrow it to the namespaces carrying Plimsoll's labels; the operator's
            # code only deletes those it finds by its owner label (README, "Security
            # model").
            "verbs": ["create", "get", "list", "patch", "delete"],
        },
        {
            "apiGroups": ["apiextensions.k8s.io"],
            "resources": ["customresourcedefinitions"],
            "verbs": ["get", "list", "watch"],
        },
        # kopf's peering (`plimsoll operator --peering`): each replica watches the
        # peering object and patches its own keep-alive into its status.
        {
            "apiGroups": ["kopf.dev"],
            "resources": ["clusterkopfpeerings"],
            "verbs": ["get", "list", "watch", "patch"],
        },
        # Its rights inside a run namespace: a RoleBinding it makes there first. RBAC's
        # escalation check lets it bind only roles it holds `bind` on (the next rule).
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["rolebindings"],
            "verbs": ["create", "get"],
        },
        # After binding, it asks whether the right is in effect yet (`kube.grants`).
        # Usually granted to everyone by system:basic-user; said here for clusters
        # that removed that binding.
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews"],
            "verbs": ["create"],
        },
        # resourceNames: the chart adds exactly its run (and report) ClusterRole.
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["bind"],
        },
    ],
    # Namespaced mode only: kopf follows the namespaces it serves; without it every
    # watch attempt is refused (403), as a real API server showed. Cluster-wide, kopf
    # watches no namespaces.
    "namespaced": [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["watch"]},
    ],
    # Where CapacityTests live: cluster-wide, or a Role per watched namespace.
    "watched": [
        {
            "apiGroups": ["plimsoll.dev"],
            "resources": ["capacitytests"],
            "verbs": ["get", "list", "watch", "patch"],
        },
        {
            "apiGroups": ["plimsoll.dev"],
            "resources": ["capacitytests/status"],
            "verbs": ["get", "patch"],
        },
        # Owner references to a CapacityTest from the report ConfigMap.
        {
            "apiGroups": ["plimsoll.dev"],
            "resources": ["capacitytests/finalizers"],
            "verbs": ["update"],
        },
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create"]},
        {
            "apiGroups": ["kopf.dev"],
            "resources": ["kopfpeerings"],
            "verbs": ["get", "list", "watch", "patch"],
        },
    ],
    # The report ConfigMap in a CapacityTest's namespace: in the watched namespaces'
    # Role (namespaced mode), or a ClusterRole the operator binds in a CapacityTest's
    # namespace just before writing its report (cluster-wide mode).
    "report": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get", "patch"]},
    ],
    # Reading what `valueFrom` references (only objects labelled
    # plimsoll.dev/runs-may-read=true are copied, a check of the operator's code) and the
    # Deployment `target.fromDeployment` names: in the watched namespaces' Role
    # (namespaced mode), or a ClusterRole the operator binds in a CapacityTest's
    # namespace when its spec needs one (cluster-wide mode). Never list or watch.
    "references": [
        {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["get"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]},
    ],
    # Writing the proven capacity onto the Deployment the target copies
    # (`contract.annotate`): in the watched namespaces' Role (namespaced mode), or a
    # ClusterRole the operator binds in a CapacityTest's namespace when its spec asks
    # (cluster-wide mode). RBAC cannot narrow `patch` to annotations; the chart's
    # admission policy refuses any change but to the plimsoll.dev/ annotations.
    "contract": [
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "patch"]},
    ],
    # The run ClusterRole, bound nowhere by the chart: the operator binds it in each
    # run namespace it creates.
    "runs": [
        {
            "apiGroups": [""],
            "resources": ["pods", "services", "configmaps", "resourcequotas", "limitranges"],
            "verbs": _RUN_VERBS,
        },
        # The run's control-API token and `valueFrom` copies: applied, read back on
        # resume, deleted.
        {"apiGroups": [""], "resources": ["secrets"], "verbs": _RUN_VERBS},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": _RUN_VERBS},
        {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": _RUN_VERBS},
        # An autoscaler flight's target: a Deployment and its HPA, watched as they scale.
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": _RUN_VERBS},
        {
            "apiGroups": ["autoscaling"],
            "resources": ["horizontalpodautoscalers"],
            "verbs": _RUN_VERBS,
        },
    ],
    # Added to the run role only when the operator reaches the generators through the
    # API server's pod proxy (it runs outside the cluster: `rbac.podProxy`).
    "proxy": [
        {"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["get", "create"]},
    ],
}

_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+)(?=/))?"
    r"(?:/(?P<resource>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?)?"
)
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def request_attributes(method: str, path: str, query: str = "") -> tuple[str, str, str] | None:
    """(apiGroup, resource[/subresource], verb) of an API call; None for discovery."""
    match = _PATH.match(path)
    if match is None or match.group("resource") is None:
        return None
    group = "" if match.group("core") else match.group("group")
    name, sub = match.group("name"), match.group("sub")
    resource = match.group("resource") + (f"/{sub}" if sub else "")
    verb = _VERBS.get(method)
    if verb is None:
        watching = "true" in parse_qs(query).get("watch", [])
        verb = "watch" if watching else ("get" if name else "list")
    return group, resource, verb


def allows(group: str, resource: str, verb: str) -> bool:
    return any(
        group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]
        for rules in RULES.values()
        for rule in rules
    )


def render_rules() -> str:
    header = "# Generated by plimsoll.controller.rbac; do not edit by hand.\n"
    return header + yaml.safe_dump(RULES, sort_keys=False)
