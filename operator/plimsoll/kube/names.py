"""Names, labels and images of one Kubernetes run: the identity every child object carries.

Used by the manifest builders (`plimsoll.kube.manifests`), the platform that
creates the objects (`plimsoll.platforms.kubernetes.platform`) and the operator's cleanup,
so "is this object ours?" is answered by one set of labels everywhere. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from plimsoll.api import trial

LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_OWNER_UID = "plimsoll.dev/owner-uid"
LABEL_OWNER_NAME = "plimsoll.dev/owner-name"
LABEL_OWNER_NAMESPACE = "plimsoll.dev/owner-namespace"
LABEL_RUN = "plimsoll.dev/run"
LABEL_ROLE = "plimsoll.dev/role"
LABEL_VARIANT = "plimsoll.dev/variant"
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

_MAX_NAME = 63


def _dns_label(text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return cleaned or "x"


def run_namespace_name(test_name: str, run_id: str) -> str:
    """`plimsoll-<name>-<run id>`, the name shortened so the whole fits a DNS label."""
    short = run_id[:8]
    room = _MAX_NAME - len("plimsoll-") - len(short) - 1
    name = _dns_label(test_name)[:room].rstrip("-")
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


DEFAULT_VARIANT = "default"  # a run without variants: its children keep their plain names
_SLUG_MAX = 12  # so `setup-<step, 40>-<slug>` still fits a 63-character label (Job names)


def variant_slug(variant: str) -> str:
    """A short DNS-label form of a variant's name for its children's names; a long name is
    cut and given a hash of the whole, so two variants never share a slug."""
    cleaned = _dns_label(variant)
    if cleaned == variant and len(cleaned) <= _SLUG_MAX:
        return cleaned
    digest = hashlib.sha256(variant.encode()).hexdigest()[:6]
    return f"{cleaned[: _SLUG_MAX - 7].rstrip('-')}-{digest}"


def child_name(base: str, variant: str = DEFAULT_VARIANT) -> str:
    """`base` for a run without variants, else `base-<variant slug>`: each variant's pods,
    Services, ConfigMaps, Jobs and policies are its own, so with `cleanup: Never` they all
    stay side by side and a variant never adopts another's. The one place such names are made."""
    if variant == DEFAULT_VARIANT:
        return base
    suffix = f"-{variant_slug(variant)}"
    return f"{base[: _MAX_NAME - len(suffix)].rstrip('-')}{suffix}"


def named_mock_pod_name(name: str, index: int, variant: str = DEFAULT_VARIANT) -> str:
    """A named mock's pods (`spec.upstreams`): mock-auth-0, mock-auth-1, ..."""
    return child_name(f"mock-{name}-{index}", variant)


def named_mock_pod_pattern(name: str, variant: str = DEFAULT_VARIANT) -> str:
    return child_pattern(f"mock-{name}-[0-9]+", variant)


def named_mock_service(name: str, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"{MOCK_SERVICE}-{name}", variant)


def named_mock_config_map(name: str, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"{MOCK_CONFIG_MAP}-{name}", variant)


def child_pattern(base_pattern: str, variant: str = DEFAULT_VARIANT) -> str:
    """The regex for `child_name(base, variant)` when `base_pattern` matches `base` (the
    pods' names are all Prometheus' cAdvisor series carry). A slug is [a-z0-9-] only."""
    return base_pattern if variant == DEFAULT_VARIANT else f"{base_pattern}-{variant_slug(variant)}"


def target_pod_name(variant: str = DEFAULT_VARIANT) -> str:
    return child_name("target", variant)


def mock_pod_name(index: int, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"mock-{index}", variant)


def generator_pod_name(index: int, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"generator-{index}", variant)


def service_pod_name(name: str, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"svc-{name}", variant)


def target_pod_pattern(variant: str = DEFAULT_VARIANT) -> str:
    return child_pattern("target", variant)


def mock_pod_pattern(variant: str = DEFAULT_VARIANT) -> str:
    return child_pattern("mock-[0-9]+", variant)


def generator_pod_pattern(variant: str = DEFAULT_VARIANT) -> str:
    return child_pattern("generator-[0-9]+", variant)


# The bases of a run's other children; `child_name(base, variant)` gives the object's name.
MOCK_SERVICE = "plimsoll-mock"
MOCK_CONFIG_MAP = "plimsoll-mock-config"
CONTROL_TOKEN_SECRET = trial.CONTROL_TOKEN_SECRET  # the generators' control API secret
# The values of `valueFrom` references, copied from the CapacityTest's namespace.
RUN_ENV_SECRET = "run-env"
TARGET_SERVICE = "plimsoll-target"
RUN_EGRESS_POLICY = "run-egress"
GENERATORS_EGRESS_POLICY = "generators-egress"
