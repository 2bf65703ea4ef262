"""Names, labels and images of one Kubernetes run: the identity every child object carries.

Used by the manifest builders (`plimsoll.kube.manifests`), the platform that
creates the objects (`plimsoll.platforms.kubernetes.platform`) and the operator's cleanup,
so "is this object ours?" is answered by one set of labels everywhere. Pure: no I/O.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from plimsoll.api import trial

# The pod names both platforms give (Prometheus' series carry them), from the layer below.
from plimsoll.shared.pod_names import DEFAULT_VARIANT as DEFAULT_VARIANT
from plimsoll.shared.pod_names import child_name as child_name
from plimsoll.shared.pod_names import child_pattern as child_pattern
from plimsoll.shared.pod_names import dns_label
from plimsoll.shared.pod_names import generator_pod_name as generator_pod_name
from plimsoll.shared.pod_names import generator_pod_pattern as generator_pod_pattern
from plimsoll.shared.pod_names import mock_pod_name as mock_pod_name
from plimsoll.shared.pod_names import mock_pod_pattern as mock_pod_pattern
from plimsoll.shared.pod_names import named_mock_pod_name as named_mock_pod_name
from plimsoll.shared.pod_names import named_mock_pod_pattern as named_mock_pod_pattern
from plimsoll.shared.pod_names import service_pod_name as service_pod_name
from plimsoll.shared.pod_names import target_pod_name as target_pod_name
from plimsoll.shared.pod_names import target_pod_pattern as target_pod_pattern
from plimsoll.shared.pod_names import variant_slug as variant_slug

LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_OWNER_UID = "plimsoll.dev/owner-uid"
LABEL_OWNER_NAME = "plimsoll.dev/owner-name"
LABEL_OWNER_NAMESPACE = "plimsoll.dev/owner-namespace"
LABEL_RUN = "plimsoll.dev/run"
LABEL_ROLE = "plimsoll.dev/role"
LABEL_VARIANT = "plimsoll.dev/variant"
LABEL_ZONE = "plimsoll.dev/zone"  # a target replica's zone (`target.zones`)
ZONE_TOPOLOGY_KEY = "topology.kubernetes.io/zone"  # the well-known label nodes carry
MANAGER = "plimsoll"

ROLE_TARGET = "target"
ROLE_MOCK = "mock"
ROLE_GENERATOR = "generator"
ROLE_SERVICE = "service"
ROLE_SETUP = "setup"

# Ports inside the pods. Every pod has its own IP, so fixed ports never collide.
GENERATOR_PORT = 8089


def floor_port(upstream_port: int, image: str | None) -> int | None:
    """The default mock pod's direct-call floor port (`plimsoll_mock.floor`): the one
    beside the mock's own, the only other port in that pod. None for a mock image of
    the user's (`upstream.image`), which may not serve one: its /healthz stands in."""
    if image is not None:
        return None
    return upstream_port + 1 if upstream_port < 65535 else upstream_port - 1


DEFAULT_GENERATOR_IMAGE = "plimsoll-generator:0.1.0"
DEFAULT_MOCK_IMAGE = "plimsoll-mock:0.1.0"

_MAX_NAME = 63  # a DNS label


def run_namespace_name(test_name: str, run_id: str) -> str:
    """`plimsoll-<name>-<run id>`, the name shortened so the whole fits a DNS label."""
    short = run_id[:8]
    room = _MAX_NAME - len("plimsoll-") - len(short) - 1
    name = dns_label(test_name)[:room].rstrip("-")
    return f"plimsoll-{name}-{short}"


@dataclass(frozen=True)
class Images:
    """The images Plimsoll deploys itself; the Helm chart sets them through the env.

    A CapacityTest may pick another generator or mock image (`generators.image`,
    `upstream.image`) only from `allowed`: those pods receive the run's control token
    and drive load, so which code runs there is the operator's choice, not a CR's.
    """

    generator: str = DEFAULT_GENERATOR_IMAGE
    mock: str = DEFAULT_MOCK_IMAGE
    allowed: frozenset[str] = frozenset()  # beyond the two above (PLIMSOLL_ALLOWED_IMAGES)

    @classmethod
    def from_env(cls) -> Images:
        extra = os.environ.get("PLIMSOLL_ALLOWED_IMAGES", "")
        return cls(
            generator=os.environ.get("PLIMSOLL_GENERATOR_IMAGE") or DEFAULT_GENERATOR_IMAGE,
            mock=os.environ.get("PLIMSOLL_MOCK_IMAGE") or DEFAULT_MOCK_IMAGE,
            allowed=frozenset(i.strip() for i in extra.split(",") if i.strip()),
        )

    def refused(self, field: str, image: str | None) -> str | None:
        """Why `image`, asked for in `field`, may not run; None when it may."""
        if image is None or image in {self.generator, self.mock, *self.allowed}:
            return None
        return (
            f"{field}: image {image!r} is not one this operator runs for its own pods; "
            "leave it unset to use the operator's image, or have the operator's admin add "
            "it to PLIMSOLL_ALLOWED_IMAGES (Helm: allowedImages)"
        )


@dataclass(frozen=True)
class RunIdentity:
    """Who a run belongs to and where it lives; every child carries `labels()`."""

    namespace: str
    run_id: str
    owner_uid: str
    owner_name: str
    owner_namespace: str
    variant: str = "default"  # DEFAULT_VARIANT

    def labels(self, role: str | None = None) -> dict[str, str]:
        labels = {
            LABEL_MANAGED_BY: MANAGER,
            LABEL_OWNER_UID: self.owner_uid,
            LABEL_OWNER_NAME: self.owner_name[:63],
            LABEL_OWNER_NAMESPACE: self.owner_namespace,
            LABEL_RUN: self.run_id,
            LABEL_VARIANT: self.variant,
        }
        if role is not None:
            labels[LABEL_ROLE] = role
        return labels

    def selector(self, role: str) -> dict[str, str]:
        """The labels that pick this run's pods of one role (Services, NetworkPolicies)."""
        return {LABEL_RUN: self.run_id, LABEL_VARIANT: self.variant, LABEL_ROLE: role}

    def owns_run(self, labels: dict[str, str] | None) -> bool:
        """True when an existing object was made by this run, for any of its variants: what
        the variants share, the namespace, may be adopted on this alone."""
        labels = labels or {}
        return (
            labels.get(LABEL_RUN) == self.run_id and labels.get(LABEL_OWNER_UID) == self.owner_uid
        )

    def owns(self, labels: dict[str, str] | None) -> bool:
        """True when an existing object was made by this run *for this variant*: only then
        may a pod be adopted (or replaced), or the second variant would measure the first
        one's target."""
        return self.owns_run(labels) and (labels or {}).get(LABEL_VARIANT) == self.variant

    def child(self, base: str) -> str:
        """The name of this variant's child object called `base` (see `child_name`)."""
        return child_name(base, self.variant)

    def run_selector(self) -> dict[str, str]:
        """The labels every child of this run carries, whichever its variant."""
        return {LABEL_RUN: self.run_id, LABEL_OWNER_UID: self.owner_uid}


def named_mock_service(name: str, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"{MOCK_SERVICE}-{name}", variant)


def named_mock_config_map(name: str, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"{MOCK_CONFIG_MAP}-{name}", variant)


# The bases of a run's other children; `child_name(base, variant)` gives the object's name.
MOCK_SERVICE = "plimsoll-mock"
MOCK_CONFIG_MAP = "plimsoll-mock-config"
CONTROL_TOKEN_SECRET = trial.CONTROL_TOKEN_SECRET  # the generators' control API secret
# The values of `valueFrom` references, copied from the CapacityTest's namespace.
RUN_ENV_SECRET = "run-env"
TARGET_SERVICE = "plimsoll-target"
RUN_EGRESS_POLICY = "run-egress"
RUN_INGRESS_POLICY = "run-ingress"
GENERATORS_EGRESS_POLICY = "generators-egress"
