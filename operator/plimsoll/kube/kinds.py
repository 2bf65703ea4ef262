"""The kinds of object Plimsoll creates, and where each lives in the API's URL space."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Kind:
    api_version: str  # "v1" or "group/version"
    plural: str
    namespaced: bool = True

    def base(self) -> str:
        return (
            f"/api/{self.api_version}"
            if "/" not in self.api_version
            else f"/apis/{self.api_version}"
        )


NAMESPACES = Kind("v1", "namespaces", namespaced=False)
PODS = Kind("v1", "pods")
SERVICES = Kind("v1", "services")
CONFIG_MAPS = Kind("v1", "configmaps")
SECRETS = Kind("v1", "secrets")
JOBS = Kind("batch/v1", "jobs")
NETWORK_POLICIES = Kind("networking.k8s.io/v1", "networkpolicies")
CAPACITY_TESTS = Kind("plimsoll.dev/v1alpha1", "capacitytests")
EVENTS = Kind("v1", "events")
RESOURCE_QUOTAS = Kind("v1", "resourcequotas")
LIMIT_RANGES = Kind("v1", "limitranges")
ROLE_BINDINGS = Kind("rbac.authorization.k8s.io/v1", "rolebindings")
SELF_SUBJECT_ACCESS_REVIEWS = Kind(
    "authorization.k8s.io/v1", "selfsubjectaccessreviews", namespaced=False
)

KINDS_BY_API_KIND = {
    ("v1", "Namespace"): NAMESPACES,
    ("v1", "Pod"): PODS,
    ("v1", "Service"): SERVICES,
    ("v1", "ConfigMap"): CONFIG_MAPS,
    ("v1", "Secret"): SECRETS,
    ("v1", "Event"): EVENTS,
    ("v1", "ResourceQuota"): RESOURCE_QUOTAS,
    ("v1", "LimitRange"): LIMIT_RANGES,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ROLE_BINDINGS,
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): SELF_SUBJECT_ACCESS_REVIEWS,
    ("batch/v1", "Job"): JOBS,
    ("networking.k8s.io/v1", "NetworkPolicy"): NETWORK_POLICIES,
    ("plimsoll.dev/v1alpha1", "CapacityTest"): CAPACITY_TESTS,
}


def kind_of(body: dict[str, Any]) -> Kind:
    return KINDS_BY_API_KIND[(body["apiVersion"], body["kind"])]
