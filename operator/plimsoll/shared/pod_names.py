"""The names both platforms give a run's pods: `target`, `mock-0`, `generator-N`, `svc-NAME`.

The Kubernetes platform names its pods so (`plimsoll.kube.names` re-exports these),
and the local platform registers its processes under the same names
(`plimsoll.platforms.local.exported`), so Prometheus' cAdvisor series carry one set
of pod names and one PromQL reads either platform. Below both platforms, so neither
imports the other's code for it. Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re

_MAX_NAME = 63  # a DNS label


def dns_label(text: str) -> str:
    """`text` as a DNS label's characters: lower-case letters, digits and dashes."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return cleaned or "x"


DEFAULT_VARIANT = "default"  # a run without variants: its children keep their plain names
_SLUG_MAX = 12  # so `setup-<step, 40>-<slug>` still fits a 63-character label (Job names)


def variant_slug(variant: str) -> str:
    """A short DNS-label form of a variant's name for its children's names; a long name is
    cut and given a hash of the whole, so two variants never share a slug."""
    cleaned = dns_label(variant)
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


def child_pattern(base_pattern: str, variant: str = DEFAULT_VARIANT) -> str:
    """The regex for `child_name(base, variant)` when `base_pattern` matches `base` (the
    pods' names are all Prometheus' cAdvisor series carry). A slug is [a-z0-9-] only."""
    return base_pattern if variant == DEFAULT_VARIANT else f"{base_pattern}-{variant_slug(variant)}"


def target_replica(index: int) -> str:
    """Replica `index` of the target: `target`, `target-1`, `target-2`, ... (the first keeps
    the plain name, so a one-replica run reads as before)."""
    return "target" if index == 0 else f"target-{index}"


def target_pod_name(variant: str = DEFAULT_VARIANT, index: int = 0) -> str:
    return child_name(target_replica(index), variant)


def mock_pod_name(index: int, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"mock-{index}", variant)


def generator_pod_name(index: int, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"generator-{index}", variant)


def service_pod_name(name: str, variant: str = DEFAULT_VARIANT) -> str:
    return child_name(f"svc-{name}", variant)


def target_pod_pattern(variant: str = DEFAULT_VARIANT) -> str:
    """Replica 0's pod: as locally, the verdict reads the first replica's resources and
    the others run beside it (`platforms.local.target.replica_role`)."""
    return child_pattern("target", variant)


def mock_pod_pattern(variant: str = DEFAULT_VARIANT) -> str:
    return child_pattern("mock-[0-9]+", variant)


def generator_pod_pattern(variant: str = DEFAULT_VARIANT) -> str:
    return child_pattern("generator-[0-9]+", variant)
