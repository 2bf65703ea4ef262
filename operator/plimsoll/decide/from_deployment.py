"""`target.fromDeployment`: the target as a copy of a Deployment's container (issue 55).

Who: the Kubernetes platform, which reads the Deployment from the CapacityTest's own
namespace (through the references role, `plimsoll.controller.rbac`) and calls
`copied_target` before it creates anything; a problem stops the start, naming it.

What is copied from the named container (or the pod's only one): the image, command,
args, plain env values, env read from a Secret's or ConfigMap's key (as `valueFrom`, so
the same consent label holds: only objects labelled plimsoll.dev/runs-may-read=true are
copied into the run), the first container port and the readiness probe's HTTP path.
The variables Plimsoll fills itself are swapped, not copied: `upstreamEnv` and each named
mock's `envVar` get the mocks' URLs, `portEnv` the port (the Deployment's value would
point the copy at the real upstream). What the spec sets itself wins (an env value,
`port`, `readinessPath`), and the spec's
`resources` pin the shape: the copy never inherits a request that is not a limit.

What is refused, naming it and the fix, because it cannot be copied safely or faithfully
into a fresh namespace: volumes and volume mounts (host paths, claims and other
namespaces' objects have no safe copy; a ConfigMap or Secret volume is not copied yet),
`envFrom`, env from the pod's own fields or resources (`fieldRef`, `resourceFieldRef`),
and a pod of several containers when `container` does not name one. Security contexts,
service accounts and sidecars are not copied: the run's pod keeps the operator's
restricted defaults. Pure: the Deployment is passed in as the API server returned it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from plimsoll.api.env_source import EnvSource, KeyRef
from plimsoll.api.target import Target

FIELD = "spec.target.fromDeployment"


class DeploymentCopyError(ValueError):
    """What of the Deployment cannot be copied: one line per problem, each naming it."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def copied_target(
    target: Target, deployment: dict[str, Any], swapped: Collection[str] = ()
) -> Target:
    """`target` with what its `fromDeployment` names copied in; DeploymentCopyError
    naming each part that cannot be copied. `swapped`: the variables the spec's named
    mocks fill (`upstreams[].envVar`), left out like `upstreamEnv` and `portEnv`."""
    source = target.from_deployment
    if source is None:
        return target
    where = f"{FIELD} (deployment {source.name})"
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    container, problems = _container(pod.get("containers") or [], source.container, where)
    if container is None:
        raise DeploymentCopyError(problems)
    name = container.get("name", "?")
    at = f"{where}, container {name}"
    if pod.get("volumes") or container.get("volumeMounts"):
        problems.append(
            f"{at}: volumes are not copied (host paths, claims and other namespaces' objects "
            "have no safe copy; ConfigMap and Secret volumes are not built yet): give the "
            "files to the target another way, or use target.image with target.podTemplate"
        )
    if container.get("envFrom"):
        problems.append(
            f"{at}: envFrom is not copied; name each variable under target.env or "
            "target.valueFrom instead"
        )
    filled = {
        target.upstream_env,
        *(swapped or ()),
        *([target.port_env] if target.port_env else []),
    }
    env, value_from, env_problems = _env(container.get("env") or [], target, filled, at)
    problems += env_problems
    if not container.get("image"):
        problems.append(f"{at}: has no image")
    if problems:
        raise DeploymentCopyError(problems)
    update: dict[str, Any] = {
        "image": container["image"],
        "command": list(container["command"]) if container.get("command") else None,
        "env": {**env, **target.env},
        "value_from": {**value_from, **target.value_from},
        "from_deployment": None,
    }
    if "args" not in target.model_fields_set:
        update["args"] = list(container.get("args") or [])
    ports = [p.get("containerPort") for p in container.get("ports") or []]
    if "port" not in target.model_fields_set and ports and isinstance(ports[0], int):
        update["port"] = ports[0]
    path = ((container.get("readinessProbe") or {}).get("httpGet") or {}).get("path")
    if "readiness_path" not in target.model_fields_set and isinstance(path, str) and path:
        update["readiness_path"] = path
    # Validated again as a Target: an image, path or variable name the model would refuse
    # in a spec is refused here too, naming what.
    merged = target.model_copy(update=update).model_dump(by_alias=True, exclude={"from_deployment"})
    try:
        return Target.model_validate(merged)
    except ValueError as exc:
        raise DeploymentCopyError([f"{at}: the copy is not a valid target: {exc}"]) from exc


def _container(
    containers: list[dict[str, Any]], wanted: str | None, where: str
) -> tuple[dict[str, Any] | None, list[str]]:
    names = [c.get("name", "?") for c in containers]
    if wanted is not None:
        for container in containers:
            if container.get("name") == wanted:
                return container, []
        return None, [f"{where}: has no container {wanted!r} (it has {', '.join(names)})"]
    if len(containers) == 1:
        return containers[0], []
    if not containers:
        return None, [f"{where}: its pod template has no container"]
    return None, [
        f"{where}: its pod has {len(containers)} containers ({', '.join(names)}): name the "
        "one to test as fromDeployment.container"
    ]


def _env(
    entries: list[dict[str, Any]], target: Target, filled: set[str], at: str
) -> tuple[dict[str, str], dict[str, EnvSource], list[str]]:
    env: dict[str, str] = {}
    value_from: dict[str, EnvSource] = {}
    problems: list[str] = []
    for entry in entries:
        name = entry.get("name", "")
        if name in target.env or name in target.value_from or name in filled:
            continue  # the spec's own value wins; Plimsoll fills the mocks' and the port
        source = entry.get("valueFrom")
        if source is None:
            env[name] = str(entry.get("value", ""))
        elif "secretKeyRef" in source or "configMapKeyRef" in source:
            kind = "secretKeyRef" if "secretKeyRef" in source else "configMapKeyRef"
            ref = source[kind] or {}
            key_ref = KeyRef(name=ref.get("name", ""), key=ref.get("key", ""))
            value_from[name] = EnvSource.model_validate({kind: key_ref.model_dump()})
        else:
            what = ", ".join(sorted(source))
            problems.append(
                f"{at}: env {name} is read from the pod's own {what}, which a copy in "
                f"another namespace would read differently: set it under target.env"
            )
    return env, value_from, problems


@dataclass(frozen=True)
class ContainerShape:
    """The container a Deployment runs, and the shape its limits (else its requests)
    give; None for a value neither sets."""

    name: str
    cpu: str | None
    memory: str | None


def container_shape(deployment: dict[str, Any], wanted: str | None) -> ContainerShape:
    """The container `wanted` (or the pod's only one) and its shape; `plimsoll init
    --deployment` writes the shape production runs the pod at as the one to measure.
    DeploymentCopyError when there is no such container, or several and none named."""
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    where = f"deployment {(deployment.get('metadata') or {}).get('name', '?')}"
    container, problems = _container(pod.get("containers") or [], wanted, where)
    if container is None:
        raise DeploymentCopyError(problems)
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    cpu = limits.get("cpu") or requests.get("cpu")
    memory = limits.get("memory") or requests.get("memory")
    return ContainerShape(
        name=str(container.get("name", "")),
        cpu=str(cpu) if cpu is not None else None,
        memory=str(memory) if memory is not None else None,
    )


def container_image(deployment: dict[str, Any], wanted: str | None) -> str | None:
    """The image of the container `wanted` (or the pod's only one); None when there is no
    such container or several and none named (the run's copy names that problem)."""
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    container, _ = _container(pod.get("containers") or [], wanted, "")
    image = container.get("image") if container is not None else None
    return str(image) if image else None
