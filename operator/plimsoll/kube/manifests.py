"""The Kubernetes objects of one run, built from the CapacityTest models as plain dicts.

Called by `plimsoll.platforms.kubernetes.platform`, which creates them in this order:
namespace, mock ConfigMap, mock pods and Service, dependency services, target pod
and Service, setup Jobs, generator pods (the NetworkPolicies, made before any pod, are
in `plimsoll.kube.network_policies`). Pure functions, so
`tests/platforms` validates every object against Kubernetes' own schemas
(`kubernetes-validate`) and against Pod Security Standards `restricted`.

Pods are bare Pods, not Deployments: a capacity test is an experiment, and a
controller silently replacing an evicted pod mid-trial would blend two pods into
one measurement. A restart in place (restartPolicy Always) is counted instead.
The generators reach the target by pod IP, which keeps kube-proxy's hop out of
the measured latency; the target reaches the mock and services by Service name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from plimsoll.api.env_source import EnvSource
from plimsoll.api.spec import CapacityTestSpec, Generators, PodShape, Service, SetupStep
from plimsoll.api.trial import CONTROL_TOKEN_ENV
from plimsoll.api.upstream import MOCK_CONFIG_ENV, NamedUpstream, Upstream, mock_role
from plimsoll.decide.run_budget import KnownShapes
from plimsoll.kube import names
from plimsoll.kube.boundaries import UNDECLARED
from plimsoll.kube.names import RunIdentity
from plimsoll.kube.pod_specs import (
    container_security,
    env_list,
    guaranteed,
    http_probe,
    merge_template,
    pod_ip_env,
    pod_security,
    tcp_probe,
    tmp_volume,
    whole_cores,
)

PSS_LABELS = {
    f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "audit", "warn")
}
MOCK_CONFIG_KEY = "upstream.json"
CONTROL_TOKEN_KEY = "token"
_GENERATOR_DEFAULT = PodShape(cpu=1.0, memory=512 * 2**20)
_MOCK_SHAPE = PodShape(cpu=0.5, memory=256 * 2**20)
_MOCK_REQUESTS = {"cpu": "500m", "memory": "256Mi"}
# The run's ResourceQuota counts these for the pods whose spec gives no size.
KNOWN_SHAPES = KnownShapes(mock=_MOCK_SHAPE, generator=_GENERATOR_DEFAULT, undeclared=UNDECLARED)


def meta(run: RunIdentity, name: str, role: str | None = None) -> dict[str, Any]:
    return {"name": name, "namespace": run.namespace, "labels": run.labels(role)}


def namespace(run: RunIdentity) -> dict[str, Any]:
    labels = {**run.labels(), **PSS_LABELS}
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": run.namespace, "labels": labels},
    }


def service_host(run: RunIdentity, service: str) -> str:
    return f"{service}.{run.namespace}.svc"


def mock_url(run: RunIdentity, upstream: Upstream) -> str:
    return f"http://{service_host(run, run.child(names.MOCK_SERVICE))}:{upstream.port}"


# No pod of a run talks to the API server, so none gets a token to do it with: a target
# image of the CR's choosing would otherwise hold the run namespace's default account.
_NO_API_TOKEN = {"automountServiceAccountToken": False}


def _pod(run: RunIdentity, name: str, role: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(run, name, role),
        "spec": {**spec, **_NO_API_TOKEN},
    }


def _our_container(name: str, image: str, command: list[str]) -> dict[str, Any]:
    _, mount = tmp_volume()
    return {
        "name": name,
        "image": image,
        # Never Always: a node without a registry (kind load, k3d import, ctr import)
        # has the image already, and a `latest` tag would otherwise mean Always.
        "imagePullPolicy": "IfNotPresent",
        "command": command,
        "securityContext": container_security(read_only_root=True),
        "volumeMounts": [mount],
    }


def mock_config_map(run: RunIdentity, upstream: Upstream) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(run, run.child(names.MOCK_CONFIG_MAP), names.ROLE_MOCK),
        "data": {MOCK_CONFIG_KEY: json.dumps(upstream.to_wire(), sort_keys=True)},
    }


def named_mock_config_map(run: RunIdentity, named: NamedUpstream) -> dict[str, Any]:
    """A named mock's own configuration: its routes, without its name and variable."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(
            run, names.named_mock_config_map(named.name, run.variant), mock_role(named.name)
        ),
        "data": {MOCK_CONFIG_KEY: json.dumps(named.upstream().to_wire(), sort_keys=True)},
    }


def control_token_secret(run: RunIdentity, token: str) -> dict[str, Any]:
    """The run's control-API token, for the generators' env; the operator keeps a copy."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": meta(run, run.child(names.CONTROL_TOKEN_SECRET), names.ROLE_GENERATOR),
        "stringData": {CONTROL_TOKEN_KEY: token},
    }


def value_from_env(
    run: RunIdentity, owner: str, value_from: dict[str, EnvSource]
) -> list[dict[str, Any]]:
    """`valueFrom` variables, read from the run's own copy (`run_env_secret`, this
    variant's): the pods run in the run namespace, the referenced objects live in the
    CapacityTest's."""
    secret = run.child(names.RUN_ENV_SECRET)
    return [
        {
            "name": name,
            "valueFrom": {"secretKeyRef": {"name": secret, "key": run_env_key(owner, name)}},
        }
        for name in value_from
    ]


def run_env_key(owner: str, name: str) -> str:
    """The key in `run-env` of one variable of one pod: `target.DB_PASSWORD`."""
    return f"{owner}.{name}"


def run_env_secret(run: RunIdentity, data: dict[str, str]) -> dict[str, Any]:
    """The copied values, base64 as a Secret's `data` holds them (never decoded here)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": meta(run, run.child(names.RUN_ENV_SECRET), None),
        "data": dict(data),
    }


def value_from_owners(spec: CapacityTestSpec) -> dict[str, dict[str, EnvSource]]:
    """Every pod's `valueFrom`, by the owner part of its `run-env` keys."""
    owners = {TARGET_ENV_OWNER: dict(spec.target.value_from)} if spec.target.value_from else {}
    for service in spec.services:
        if service.value_from:
            owners[service_env_owner(service)] = dict(service.value_from)
    return owners


TARGET_ENV_OWNER = "target"


def service_env_owner(service: Service) -> str:
    return f"service-{service.name}"


def mock_pod(
    run: RunIdentity, index: int, upstream: Upstream, image: str, name: str | None = None
) -> dict[str, Any]:
    """One pod of the default mock, or of the named mock `name` (`spec.upstreams`): the
    same container reading its own ConfigMap, labelled with its own role so its Service
    selects only its pods."""
    command = ["python", "-m", "plimsoll_mock", "--host", "$(POD_IP)", "--port", str(upstream.port)]
    # The default mock serves the direct-call floor from a process of its own.
    floor = names.floor_port(upstream.port, upstream.image) if name is None else None
    if floor is not None:
        command += ["--floor-port", str(floor)]
    container = _our_container("mock", upstream.image or image, command)
    config_map = (
        run.child(names.MOCK_CONFIG_MAP)
        if name is None
        else names.named_mock_config_map(name, run.variant)
    )
    config_ref = {"configMapKeyRef": {"name": config_map, "key": MOCK_CONFIG_KEY}}
    container["env"] = [pod_ip_env(), {"name": MOCK_CONFIG_ENV, "valueFrom": config_ref}]
    container["ports"] = [{"name": "http", "containerPort": upstream.port}]
    if floor is not None:
        container["ports"].append({"name": "floor", "containerPort": floor})
    container["readinessProbe"] = http_probe("/healthz", upstream.port)
    # A declared shape pins the mock (requests == limits), so its CPU quota is readable
    # and "the mock saturated" can be judged; otherwise it only asks for room.
    shape = upstream.resources
    container["resources"] = guaranteed(shape) if shape else {"requests": dict(_MOCK_REQUESTS)}
    volume, _ = tmp_volume()
    spec = {"securityContext": pod_security(), "containers": [container], "volumes": [volume]}
    pod_name = (
        names.mock_pod_name(index, run.variant)
        if name is None
        else names.named_mock_pod_name(name, index, run.variant)
    )
    return _pod(run, pod_name, mock_role(name), spec)


def cluster_service(run: RunIdentity, base: str, role: str, port: int) -> dict[str, Any]:
    """This variant's Service `base` (named by `RunIdentity.child`) for its pods of `role`."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(run, run.child(base), role),
        "spec": {
            "selector": run.selector(role),
            "ports": [{"name": "tcp", "port": port, "targetPort": port, "protocol": "TCP"}],
        },
    }


def dependency_pod(
    run: RunIdentity, service: Service, ports: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """A service the target depends on (PostgreSQL, Valkey), pinned like the target;
    `{port}` and `{NAME.port}` in its command filled with the declared ports (`ports`)."""
    service = service.with_ports(service.port, ports or {})
    container: dict[str, Any] = {
        "name": service.name,
        "image": service.image or "",
        "env": [
            *env_list(service.env),
            *value_from_env(run, service_env_owner(service), service.value_from),
        ],
        "ports": [{"name": "tcp", "containerPort": service.port}],
        "securityContext": container_security(read_only_root=False),
    }
    if service.command:
        container["command"] = list(service.command)
    if service.args:
        container["args"] = list(service.args)
    if service.resources is not None:
        container["resources"] = guaranteed(service.resources)
    container["readinessProbe"] = (
        http_probe(service.readiness_path, service.port)
        if service.readiness_path
        else tcp_probe(service.port)
    )
    spec = {"securityContext": pod_security(run_as_user=None), "containers": [container]}
    pod = _pod(run, names.service_pod_name(service.name, run.variant), names.ROLE_SERVICE, spec)
    # Each dependency gets its own selector value, so its Service picks only it.
    pod["metadata"]["labels"][names.LABEL_ROLE] = f"{names.ROLE_SERVICE}-{service.name}"
    return pod


def dependency_service(run: RunIdentity, service: Service) -> dict[str, Any]:
    role = f"{names.ROLE_SERVICE}-{service.name}"
    return cluster_service(run, service.name, role, service.port)


def target_env(run: RunIdentity, spec: CapacityTestSpec) -> dict[str, str]:
    """The target's env; `spec` is the spec as its variant sees it (`for_variant`)."""
    target = spec.target
    env = dict(target.env)
    env[target.upstream_env] = mock_url(run, spec.upstream)
    for named in spec.upstreams:
        host = service_host(run, run.child(names.named_mock_service(named.name)))
        env[named.env_var] = f"http://{host}:{named.port}"
    if target.port_env:
        env[target.port_env] = str(target.port)
    for service in spec.services:
        host = service_host(run, run.child(service.name))
        for name, template in service.target_env.items():
            env[name] = template.replace("{host}", host).replace("{port}", str(service.port))
    return env


def replica_zone(spec: CapacityTestSpec, index: int) -> str | None:
    """The zone replica `index` runs in: `target.zones` taken in turn, as locally."""
    zones = spec.target.zones
    return zones[index % len(zones)] if zones else None


def _replica_placement(run: RunIdentity, spec: CapacityTestSpec, index: int) -> dict[str, Any]:
    """Where replica `index` may run. With zones, a required node affinity for its own
    zone (`replica_zone`), and its zone on the pod as a label: a fault that removes a zone
    finds its pods by that label, so the operator never reads Nodes (no cluster-wide
    right), and the spread is even by construction, so a topology spread constraint over
    zones would add nothing. Without zones, several replicas spread over nodes as a
    preference (a one-node cluster still runs them)."""
    zone = replica_zone(spec, index)
    if zone is not None:
        term = {"key": names.ZONE_TOPOLOGY_KEY, "operator": "In", "values": [zone]}
        required = {"nodeSelectorTerms": [{"matchExpressions": [term]}]}
        return {
            "affinity": {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
            }
        }
    if spec.target.replicas == 1:
        return {}
    spread = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": run.selector(names.ROLE_TARGET)},
    }
    return {"topologySpreadConstraints": [spread]}


def target_pod(run: RunIdentity, spec: CapacityTestSpec, index: int = 0) -> dict[str, Any]:
    """Replica `index` of the target; `spec` is the spec as its variant sees it
    (`for_variant`). Every replica is the same pod but for its name, zone and placement."""
    target = spec.target
    command, args = target.command, target.args
    container: dict[str, Any] = {
        "name": "target",
        "image": target.image or "",
        "env": [
            pod_ip_env(),
            *env_list(target_env(run, spec)),
            *value_from_env(run, TARGET_ENV_OWNER, target.value_from),
        ],
        "ports": [{"name": "http", "containerPort": target.port}],
        "readinessProbe": http_probe(target.readiness_path, target.port),
        "securityContext": container_security(read_only_root=False),
    }
    if command:
        container["command"] = list(command)
    if args:
        container["args"] = list(args)
    if target.resources is not None:
        container["resources"] = guaranteed(target.resources)
    spec_doc = {
        "securityContext": pod_security(run_as_user=None),
        "containers": [container],
        **_replica_placement(run, spec, index),
    }
    pod = _pod(run, names.target_pod_name(run.variant, index), names.ROLE_TARGET, spec_doc)
    zone = replica_zone(spec, index)
    if zone is not None:
        pod["metadata"]["labels"][names.LABEL_ZONE] = zone
    if target.pod_template:
        template = target.pod_template
        if "metadata" in template:
            extra = {
                k: v for k, v in template["metadata"].items() if k in ("labels", "annotations")
            }
            pod["metadata"] = merge_template(pod["metadata"], extra)
            pod["metadata"]["labels"].update(run.labels(names.ROLE_TARGET))  # ours win
            if zone is not None:
                pod["metadata"]["labels"][names.LABEL_ZONE] = zone
        if "spec" in template:
            pod["spec"] = merge_template(pod["spec"], template["spec"])
        _reassert_shape_and_security(pod, target.resources)
        if zone is not None:
            _reassert_zone(pod, zone)
    return pod


def _reassert_zone(pod: dict[str, Any], zone: str) -> None:
    """After a podTemplate merge the replica still runs in its own zone: our zone term is
    added to each of the template's node selector terms (they are ORed; the expressions
    inside one are ANDed), or stands alone when the template has none."""
    ours = {"key": names.ZONE_TOPOLOGY_KEY, "operator": "In", "values": [zone]}
    affinity = pod["spec"].setdefault("affinity", {})
    node = affinity.setdefault("nodeAffinity", {})
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:
        expressions = [e for e in term.get("matchExpressions", []) if e != ours]
        term["matchExpressions"] = [*expressions, ours]
    required["nodeSelectorTerms"] = terms


def _reassert_shape_and_security(pod: dict[str, Any], shape: PodShape | None) -> None:
    """After a podTemplate merge, Plimsoll's own settings win again: the restricted
    security contexts (the template may only add non-root ids) and requests == limits
    of the shape the report names, whatever the template said."""
    spec = pod["spec"]
    spec.update(_NO_API_TOKEN)
    spec["securityContext"] = {**(spec.get("securityContext") or {}), **pod_security(None)}
    for container in spec["containers"]:
        if container["name"] == "target":
            container["securityContext"] = container_security(read_only_root=False)
            if shape is not None:
                container["resources"] = guaranteed(shape)


def setup_job(run: RunIdentity, step: SetupStep, spec: CapacityTestSpec) -> dict[str, Any]:
    """A setup step (e.g. seeding a store) as a Job that runs once, to completion."""
    container: dict[str, Any] = {
        "name": "setup",
        "image": step.image or spec.target.image or "",
        "command": list(step.command),
        "env": [
            *env_list({**target_env(run, spec), **step.env}),
            *value_from_env(
                run,
                TARGET_ENV_OWNER,
                {k: v for k, v in spec.target.value_from.items() if k not in step.env},
            ),
        ],
        "securityContext": container_security(read_only_root=False),
    }
    template = {
        "metadata": {"labels": run.labels(names.ROLE_SETUP)},
        "spec": {
            "restartPolicy": "Never",
            "securityContext": pod_security(run_as_user=None),
            "containers": [container],
            **_NO_API_TOKEN,
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(run, run.child(f"setup-{step.name}"), names.ROLE_SETUP),
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": max(1, round(step.timeout)),
            "template": template,
        },
    }


def generator_pod(
    run: RunIdentity, index: int, generators: Generators, image: str
) -> dict[str, Any]:
    shape = generators.resources or _GENERATOR_DEFAULT
    processes = generators.fixed_processes or whole_cores(shape)
    command = [
        "python", "-m", "plimsoll_generator", "--host", "$(POD_IP)",
        "--port", str(names.GENERATOR_PORT), "--processes", str(processes),
    ]  # fmt: skip
    container = _our_container("generator", generators.image or image, command)
    token = run.child(names.CONTROL_TOKEN_SECRET)
    token_ref = {"secretKeyRef": {"name": token, "key": CONTROL_TOKEN_KEY}}
    container["env"] = [pod_ip_env(), {"name": CONTROL_TOKEN_ENV, "valueFrom": token_ref}]
    container["ports"] = [{"name": "control", "containerPort": names.GENERATOR_PORT}]
    container["readinessProbe"] = http_probe("/healthz", names.GENERATOR_PORT)
    container["resources"] = guaranteed(shape)
    volume, _ = tmp_volume()

    def away_from(role: str, weight: int) -> dict[str, Any]:
        return {
            "weight": weight,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": run.selector(role)},
                "topologyKey": "kubernetes.io/hostname",
            },
        }

    # Preferred, not required: on a one-node cluster the run still goes ahead.
    anti = [away_from(names.ROLE_TARGET, 100), away_from(names.ROLE_GENERATOR, 50)]
    # Generators added during a run (`replicas: auto`) spread over the nodes evenly, as a
    # preference too: more generators than nodes still schedule.
    spread = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": run.selector(names.ROLE_GENERATOR)},
    }
    spec = {
        "securityContext": pod_security(),
        "containers": [container],
        "volumes": [volume],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": anti}},
        "topologySpreadConstraints": [spread],
    }
    return _pod(run, names.generator_pod_name(index, run.variant), names.ROLE_GENERATOR, spec)
