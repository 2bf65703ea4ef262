"""The kinds of object Plimsoll reads and writes, and where each lives in the API's URL space.

Used by `plimsoll.kube.client` to build request paths, and by its callers to name
what they list, get or delete. Each kind is stated once, as its API version, kind,
plural (the URL segment) and scope; `kind_of` finds a body's kind from the same
list.

Why a table and not API discovery (which is how kubectl maps a kind to its URL):
the plural and scope of a served kind are part of its API version's contract and do
not change while the version is served, so discovery would only learn again what is
known, at a price: a round trip per group-version before the first write of each
client, one more request that can fail while the API server restarts (the client
would have to retry discovery before it could retry the write), and every server a
client talks to (kmock's emulator, the fault-injecting test server) would have to
serve discovery. The official client makes the same choice: its generated API
classes carry these paths as constants. What the table could get wrong, a typo in a
plural or a scope, is checked against the real API server's discovery
(tests/controller/test_apiserver_kinds.py), for every kind here and kopf's peering kinds.
The one fact only discovery can tell, whether a kind serves the `status`
subresource, is asked of it (`KubeClient.has_subresource`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plimsoll.api.resource import API_VERSION, KIND, PLURAL


@dataclass(frozen=True)
class Kind:
    api_version: str  # "v1" or "group/version"
    kind: str  # as a body's `kind` says it
    plural: str  # the URL segment
    namespaced: bool = True

    def base(self) -> str:
        return (
            f"/api/{self.api_version}"
            if "/" not in self.api_version
            else f"/apis/{self.api_version}"
        )


NAMESPACES = Kind("v1", "Namespace", "namespaces", namespaced=False)
PODS = Kind("v1", "Pod", "pods")
SERVICES = Kind("v1", "Service", "services")
CONFIG_MAPS = Kind("v1", "ConfigMap", "configmaps")
SECRETS = Kind("v1", "Secret", "secrets")
EVENTS = Kind("v1", "Event", "events")
RESOURCE_QUOTAS = Kind("v1", "ResourceQuota", "resourcequotas")
LIMIT_RANGES = Kind("v1", "LimitRange", "limitranges")
JOBS = Kind("batch/v1", "Job", "jobs")
# Read in a user's namespace (target.fromDeployment); made in a run's for a flight's target.
DEPLOYMENTS = Kind("apps/v1", "Deployment", "deployments")
HORIZONTAL_POD_AUTOSCALERS = Kind(
    "autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"
)
NETWORK_POLICIES = Kind("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies")
ROLE_BINDINGS = Kind("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings")
SELF_SUBJECT_ACCESS_REVIEWS = Kind(
    "authorization.k8s.io/v1",
    "SelfSubjectAccessReview",
    "selfsubjectaccessreviews",
    namespaced=False,
)
CAPACITY_TESTS = Kind(API_VERSION, KIND, PLURAL)  # the CRD's own names (plimsoll.api)

KINDS = (
    NAMESPACES,
    PODS,
    SERVICES,
    CONFIG_MAPS,
    SECRETS,
    EVENTS,
    RESOURCE_QUOTAS,
    LIMIT_RANGES,
    JOBS,
    DEPLOYMENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    NETWORK_POLICIES,
    ROLE_BINDINGS,
    SELF_SUBJECT_ACCESS_REVIEWS,
    CAPACITY_TESTS,
)
_BY_API_KIND = {(k.api_version, k.kind): k for k in KINDS}


def kind_of(body: dict[str, Any]) -> Kind:
    """The kind a body names (`apiVersion`, `kind`); a KeyError for one not listed here."""
    return _BY_API_KIND[(body["apiVersion"], body["kind"])]
