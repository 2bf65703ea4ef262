"""What a CapacityTest may change in the target's pod: an allow-list, checked up front.

`target.podTemplate` is merged into the pod the operator builds, so without a
limit a CR could ask for a privileged container, the host's network or PID
namespace, a hostPath volume, root, extra capabilities, a control-plane node or
a system priority, or quietly raise the pod's CPU limit so the ceiling is no
longer that of the shape the report names. Only scheduling placement, pull
secrets, labels and annotations, config volumes, env and non-root ids pass;
anything else is named with its path and the list of what is allowed.
Plimsoll's security contexts and the pod shape's resources are applied again
after the merge (`plimsoll.kube.manifests.target_pod`), so an allowed field can
never weaken them. Pure: called from the spec's validation.
"""

from __future__ import annotations

import json
import re
from typing import Any

from plimsoll.api.bounded import ENV_NAME_PATTERN
from plimsoll.api.env_source import CONTROL_TOKEN_REFUSAL, reads_control_token

MAX_DEPTH = 12  # affinity terms are the deepest allowed structure (about 8 levels)
MAX_BYTES = 16 * 1024

POD_SPEC_FIELDS = {
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "imagePullSecrets",
    "priorityClassName",
    "volumes",
    "containers",
    "securityContext",
    "terminationGracePeriodSeconds",
}
CONTAINER_FIELDS = {"name", "env", "envFrom", "volumeMounts"}
POD_SECURITY_FIELDS = {"runAsUser", "runAsGroup", "fsGroup", "supplementalGroups"}
VOLUME_SOURCES = {"configMap", "secret", "emptyDir"}
ENV_SOURCES = {"configMapKeyRef", "secretKeyRef"}
AFFINITY_KINDS = {"nodeAffinity", "podAffinity", "podAntiAffinity"}
# The labels and taints that mark control-plane nodes (kubeadm's, and the older name).
# (etcd's role, where etcd runs on nodes of its own, as on RKE and k3s clusters.)
CONTROL_PLANE_KEYS = {
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
    "node-role.kubernetes.io/etcd",
}
_CONTROL_PLANE = (
    "places the target on a control-plane node, where it would share the API server's "
    "machine; choose worker nodes by another label"
)


class TemplateProblems:
    """Collects every problem, each with its path, so one pass names them all."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.items: list[str] = []

    def add(self, path: str, message: str) -> None:
        where = f"{self.root}.{path.lstrip('.')}" if path else self.root
        self.items.append(f"{where}: {message}")


def _depth(value: Any) -> int:
    """Nesting depth, without recursion: a hostile CR cannot exhaust the stack here."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        stack.extend((child, level + 1) for child in children)
    return deepest


def _names(allowed: set[str]) -> str:
    return ", ".join(sorted(allowed))


def _check_keys(
    problems: TemplateProblems, path: str, value: Any, allowed: set[str]
) -> dict[str, Any]:
    if not isinstance(value, dict):
        problems.add(path, "must be an object")
        return {}
    for key in value:
        if key not in allowed:
            problems.add(f"{path}.{key}", f"is not allowed here; allowed: {_names(allowed)}")
    return value


def _items(problems: TemplateProblems, path: str, value: Any) -> list[Any]:
    """`value` as a list, or [] with the problem named (null counts as no items)."""
    if value is None:
        return []
    if not isinstance(value, list):
        problems.add(
            path, f"must be a list (found {_kind(value)}), e.g. '{path.rsplit('.')[-1]}: []'"
        )
        return []
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _check_tolerations(problems: TemplateProblems, value: Any) -> None:
    for index, toleration in enumerate(_items(problems, "spec.tolerations", value)):
        if not isinstance(toleration, dict) or not toleration.get("key"):
            problems.add(
                f"spec.tolerations[{index}]",
                "needs an explicit 'key': a toleration of every taint would place the "
                "target on control-plane or dedicated nodes",
            )
        elif toleration["key"] in CONTROL_PLANE_KEYS:
            problems.add(f"spec.tolerations[{index}].key", _CONTROL_PLANE)


def _check_node_choice(problems: TemplateProblems, spec: dict[str, Any]) -> None:
    """nodeSelector and node affinity may not pick control-plane nodes either: on a
    cluster whose control plane is untainted the label alone would do it."""
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        for key in CONTROL_PLANE_KEYS & set(selector):
            problems.add(f"spec.nodeSelector.{key}", _CONTROL_PLANE)
    affinity = spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    stack: list[Any] = [node]
    while stack:  # any matchExpressions entry, at any depth, keyed by a control-plane label
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("key"), str) and item["key"] in CONTROL_PLANE_KEYS:
                problems.add("spec.affinity.nodeAffinity", _CONTROL_PLANE)
                return
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_pod_affinity(problems: TemplateProblems, spec: dict[str, Any]) -> None:
    """Pod (anti-)affinity only to pods of the run's own namespace: a term naming other
    namespaces could place the target beside the control plane's pods (kube-system's
    API server, etcd) or beside another team's, or keep it away from them."""
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return
    for kind in ("podAffinity", "podAntiAffinity"):
        stack: list[Any] = [affinity.get(kind)]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for key in ("namespaces", "namespaceSelector"):
                    if key in item:
                        problems.add(
                            f"spec.affinity.{kind}",
                            f"names other namespaces ({key}): a term may only match pods "
                            "of the run's own namespace; leave out namespaces and "
                            "namespaceSelector",
                        )
                        return
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)


def _non_root_id(value: Any) -> bool:
    """A user or group id the API server would take as a non-root integer (YAML's
    `true` is a bool here, not the id 1)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_secret_name(problems: TemplateProblems, path: str, ref: Any, field: str) -> None:
    if isinstance(ref, dict):
        name = ref.get(field)
        if isinstance(name, str) and reads_control_token(name):
            problems.add(f"{path}.{field}", CONTROL_TOKEN_REFUSAL)


def _check_volumes(problems: TemplateProblems, value: Any) -> None:
    for index, volume in enumerate(_items(problems, "spec.volumes", value)):
        path = f"spec.volumes[{index}]"
        volume = _check_keys(problems, path, volume, {"name", *VOLUME_SOURCES})
        if volume and not (VOLUME_SOURCES & set(volume)):
            problems.add(path, f"needs one of {_names(VOLUME_SOURCES)}")
        _check_secret_name(problems, f"{path}.secret", volume.get("secret"), "secretName")


def _check_container(problems: TemplateProblems, index: int, value: Any) -> None:
    path = f"spec.containers[{index}]"
    container = _check_keys(problems, path, value, CONTAINER_FIELDS)
    if container and container.get("name") != "target":
        problems.add(
            f"{path}.name",
            f"is {container.get('name')!r}: only the 'target' container may be changed "
            "(another container would share the pod's shape and blur the measurement)",
        )
    for env_index, env in enumerate(_items(problems, f"{path}.env", container.get("env"))):
        env_path = f"{path}.env[{env_index}]"
        env = _check_keys(problems, env_path, env, {"name", "value", "valueFrom"})
        name = env.get("name")
        if env and not (isinstance(name, str) and re.match(ENV_NAME_PATTERN, name)):
            problems.add(
                f"{env_path}.name",
                f"{name!r} is not an environment variable name: letters, digits and '_', "
                "not starting with a digit, e.g. 'LOG_LEVEL'",
            )
        source = env.get("valueFrom") if env else None
        if source is not None:
            source = _check_keys(problems, f"{env_path}.valueFrom", source, ENV_SOURCES)
            secret_ref = source.get("secretKeyRef")
            _check_secret_name(problems, f"{env_path}.valueFrom.secretKeyRef", secret_ref, "name")
    env_froms = _items(problems, f"{path}.envFrom", container.get("envFrom"))
    for env_index, env_from in enumerate(env_froms):
        env_from_path = f"{path}.envFrom[{env_index}]"
        env_from = _check_keys(
            problems, env_from_path, env_from, {"configMapRef", "secretRef", "prefix"}
        )
        _check_secret_name(
            problems, f"{env_from_path}.secretRef", env_from.get("secretRef"), "name"
        )
    mounts = _items(problems, f"{path}.volumeMounts", container.get("volumeMounts"))
    for mount_index, mount in enumerate(mounts):
        mount_path = f"{path}.volumeMounts[{mount_index}]"
        mount = _check_keys(
            problems, mount_path, mount, {"name", "mountPath", "readOnly", "subPath"}
        )
        sub_path = mount.get("subPath")
        if sub_path is not None and not _relative_inside(sub_path):
            problems.add(
                f"{mount_path}.subPath",
                f"{sub_path!r} must be a relative path inside the volume: no leading '/' "
                "and no '..' (it would reach outside the volume)",
            )


def _relative_inside(sub_path: Any) -> bool:
    """A volume subPath that stays inside its volume (what the kubelet requires too)."""
    if not isinstance(sub_path, str):
        return False
    return not sub_path.startswith("/") and ".." not in sub_path.split("/")


def _check_spec(problems: TemplateProblems, spec: dict[str, Any]) -> None:
    if "affinity" in spec:
        _check_keys(problems, "spec.affinity", spec["affinity"], AFFINITY_KINDS)
    if "tolerations" in spec:
        _check_tolerations(problems, spec["tolerations"])
    _check_node_choice(problems, spec)
    _check_pod_affinity(problems, spec)
    priority = spec.get("priorityClassName")
    if isinstance(priority, str) and priority.startswith("system-"):
        problems.add(
            "spec.priorityClassName",
            f"{priority!r} is a system priority class, which can evict cluster components",
        )
    if "volumes" in spec:
        _check_volumes(problems, spec["volumes"])
    for index, container in enumerate(_items(problems, "spec.containers", spec.get("containers"))):
        _check_container(problems, index, container)
    if "securityContext" in spec:  # an explicit null would wipe the restricted context
        security = _check_keys(
            problems, "spec.securityContext", spec["securityContext"], POD_SECURITY_FIELDS
        )
        for key in ("runAsUser", "runAsGroup", "fsGroup"):
            value = security.get(key)
            if value is not None and not _non_root_id(value):
                problems.add(
                    f"spec.securityContext.{key}",
                    f"must be a non-root id, a whole number 1 or more (found {_kind(value)})",
                )
        groups = _items(
            problems, "spec.securityContext.supplementalGroups", security.get("supplementalGroups")
        )
        for index, group in enumerate(groups):
            if not _non_root_id(group):
                problems.add(
                    f"spec.securityContext.supplementalGroups[{index}]",
                    f"must be a non-root group id, 1 or more (found {_kind(group)}): group 0 "
                    "is root's, and its files would be the target's",
                )
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and (
        isinstance(grace, bool) or not isinstance(grace, int) or not 0 <= grace <= 300
    ):
        problems.add(
            "spec.terminationGracePeriodSeconds",
            f"must be a whole number of seconds, 0 to 300 (found {_kind(grace)})",
        )


def template_problems(template: Any, root: str = "podTemplate") -> list[str]:
    """Every disallowed or oversized part of a pod template, each with its path."""
    problems = TemplateProblems(root)
    if _depth(template) > MAX_DEPTH:
        problems.add("", f"is nested more than {MAX_DEPTH} levels deep")
        return problems.items
    if len(json.dumps(template, default=repr)) > MAX_BYTES:
        problems.add("", f"is larger than {MAX_BYTES // 1024} KiB")
        return problems.items
    top = _check_keys(problems, "", template, {"metadata", "spec"})
    if "metadata" in top:
        _check_keys(problems, "metadata", top["metadata"], {"labels", "annotations"})
    if "spec" in top:
        spec = _check_keys(problems, "spec", top["spec"], POD_SPEC_FIELDS)
        if spec:
            _check_spec(problems, spec)
    return problems.items
