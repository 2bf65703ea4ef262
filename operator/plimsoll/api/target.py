"""The service under test and its neighbours: the target, its pod shape, setup jobs, services.

Split from `plimsoll.api.spec` so that a variant (`plimsoll.api.variant`), which
changes these pieces, can be defined without importing the whole spec.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema, field_validator, model_validator

from plimsoll.api.autoscale import Autoscaler
from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import (
    ENV_NAME_PATTERN,
    PATH_PATTERN,
    URL_PATTERN,
    EnvName,
    ImageRef,
    PodMemory,
)
from plimsoll.api.env_source import EnvSource
from plimsoll.api.pod_template import template_problems
from plimsoll.api.pod_template_schema import POD_TEMPLATE_SCHEMA
from plimsoll.api.unique import duplicate_entries
from plimsoll.api.units import Cores, Seconds

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# A lock key may be an image reference or a URL, so ':', '/' and '@' are allowed.
LOCK_KEY_PATTERN = r"^[A-Za-z0-9][-A-Za-z0-9_.:/@]*$"


VALUE_FROM_HELP = (
    "Environment variables read from a key of a Secret (secretKeyRef) or ConfigMap "
    "(configMapKeyRef) in the CapacityTest's namespace, labelled "
    "plimsoll.dev/runs-may-read=true (Kubernetes only); the value is never copied into "
    "the status or the report."
)


def _check_value_from(env: dict[str, str], value_from: dict[str, EnvSource]) -> None:
    bad = [name for name in value_from if not re.match(ENV_NAME_PATTERN, name)]
    if bad:
        raise ValueError(f"valueFrom: {bad[0]!r} is not an environment variable name")
    both = sorted(set(env) & set(value_from))
    if both:
        raise ValueError(f"{both[0]} is in both env and valueFrom: give it in one of them")


def _check_own_variables(target: Target) -> None:
    """Variables Plimsoll sets itself may not be set in `env` too: the mock's URL would
    silently replace the user's value, and one variable cannot carry a port and a URL."""
    if target.upstream_env in target.env:
        raise ValueError(
            f"env.{target.upstream_env}: is the variable that receives the mock's URL "
            "(upstreamEnv), which would silently replace this value: remove it from env, "
            "or set upstreamEnv to another name"
        )
    if target.port_env is not None and target.port_env == target.upstream_env:
        raise ValueError(
            f"portEnv: {target.port_env!r} is also upstreamEnv: one variable cannot carry "
            "both the port and the mock's URL; give them different names"
        )
    if target.port_env is not None and target.port_env in target.env:
        raise ValueError(
            f"env.{target.port_env}: is the variable that receives the port (portEnv), which "
            "would silently replace this value: remove it from env, or change portEnv"
        )


class PodShape(PlimsollModel):
    """The pod shape to pin to: requests == limits (Kubernetes' Guaranteed QoS)."""

    cpu: Cores = Field(description="CPU, requests == limits: '1', '500m'.")
    memory: PodMemory = Field(description="Memory, requests == limits: '512Mi'.")


class SetupStep(PlimsollModel):
    """A job run to completion: before the first trial (`setup`, e.g. seeding a store) or
    after the last one while the services still run (`teardown`, e.g. removing the seed)."""

    name: str = Field(
        pattern=NAME_PATTERN,
        max_length=40,
        description="The step's name; its Job and log are named after it.",
    )
    image: ImageRef | None = Field(
        None, description="The image the step runs in on Kubernetes (default: the target's)."
    )
    command: list[str] = Field(min_length=1, description="The command to run, as a list of words.")
    env: dict[EnvName, str] = Field(
        default_factory=dict,
        description="Extra environment variables for the step, besides the target's.",
    )
    timeout: Seconds = Field(600.0, description="How long the step may take before the run stops.")


class FromDeployment(PlimsollModel):
    """A Deployment of the CapacityTest's own namespace whose pod template the operator
    copies for the target (`plimsoll.decide.from_deployment` says what is copied)."""

    name: str = Field(
        min_length=1, max_length=253, pattern=NAME_PATTERN, description="The Deployment's name."
    )
    container: str | None = Field(
        None,
        min_length=1,
        max_length=63,
        pattern=NAME_PATTERN,
        description="The container to copy; may be left out when the pod has only one.",
    )


class Target(PlimsollModel):
    """The service under test: an image (Kubernetes), a command (local), a Deployment's
    pod template (Kubernetes), or a URL."""

    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.url) || has(self.image) || has(self.command) "
                    "|| has(self.fromDeployment)",
                    "message": "say how to run the target: image, command, fromDeployment or url",
                },
                {
                    "rule": "!has(self.fromDeployment) || !(has(self.url) || has(self.image) "
                    "|| has(self.command))",
                    "message": "fromDeployment copies the image and command: leave out "
                    "image, command and url",
                },
                {
                    "rule": "has(self.url) || has(self.resources)",
                    "message": "resources (cpu and memory) are required to pin the target",
                },
                {
                    "rule": "!has(self.url) || !(has(self.image) || has(self.command))",
                    "message": "give either url (an existing service) or image/command",
                },
            ]
        }
    }

    image: ImageRef | None = Field(None, description="The target's container image (Kubernetes).")
    command: list[str] | None = Field(
        None,
        min_length=1,
        description="The command that starts the target (local platform), as a list of words.",
    )
    args: list[str] = Field(
        default_factory=list, description="Arguments after the image's entrypoint or the command."
    )
    env: dict[EnvName, str] = Field(
        default_factory=dict, description="Environment variables of the target."
    )
    value_from: dict[str, EnvSource] = Field(default_factory=dict, description=VALUE_FROM_HELP)
    port: int = Field(8080, ge=1, le=65535, description="The port the target listens on.")
    resources: PodShape | None = None
    readiness_path: str = Field(
        "/healthz",
        pattern=PATH_PATTERN,
        description="The HTTP path that answers 200 once the target is ready.",
    )
    startup_timeout: Seconds = Field(
        60.0, description="How long the target may take to become ready."
    )
    upstream_env: str = Field(
        "UPSTREAM_URL",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variable that receives the mock upstream's URL.",
    )
    port_env: str | None = Field(
        "PORT",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variable that receives the port to listen on (local).",
    )
    setup: list[SetupStep] = Field(
        default_factory=list,
        description="Jobs run after the target is ready and before the first trial, e.g. seeding a "
        "store.",
    )
    teardown: list[SetupStep] = Field(
        default_factory=list,
        description=(
            "Run after the last trial, while the services still run (local platform; on "
            "Kubernetes the run's namespace and its services are deleted instead)."
        ),
    )
    # The CRD types every allow-listed field (no free-form object: depth bounded at
    # admission); the model's validator below explains each refusal.
    pod_template: Annotated[dict[str, Any] | None, WithJsonSchema(POD_TEMPLATE_SCHEMA)] = Field(
        None,
        description=(
            "Merged into the target's pod (Kubernetes only): placement (nodeSelector, "
            "affinity, tolerations with a key, topologySpreadConstraints, a non-system "
            "priorityClassName), imagePullSecrets, labels and annotations, configMap, "
            "secret and emptyDir volumes, the target container's env, envFrom and "
            "volumeMounts, non-root ids. Anything else is rejected."
        ),
    )
    url: str | None = Field(
        None,
        pattern=URL_PATTERN,
        description="Drive an existing service: nothing is started or pinned.",
    )
    from_deployment: FromDeployment | None = Field(
        None,
        description="Run a copy of this Deployment's container (Kubernetes only): its "
        "image, command, args, env, first port and readiness path, pinned to `resources`; "
        "what the spec sets here wins. Refused, naming what, where a part cannot be copied "
        "safely (volumes, envFrom, env from the pod's own fields, several containers and no "
        "name).",
    )
    replicas: int = Field(
        1,
        ge=1,
        le=16,
        description="Replicas of the target, each pinned to `resources` (local: one process "
        "and cgroup each; the generators spread their connections over them). The ceiling "
        "stays per deployment.",
    )
    autoscaler: Autoscaler | None = Field(
        None,
        description="For search.strategy autoscale: the HPA that scales the target's replicas "
        "(local: its decisions made by Plimsoll over pinned replicas).",
    )
    zones: list[str] = Field(
        default_factory=list,
        max_length=16,
        description="Zone names the replicas are spread over evenly (replica i in zone "
        "i mod len(zones)); a fault can take one away.",
    )
    exclusive: bool = Field(
        False,
        description="Run no other CapacityTest with the same lock at the same time "
        "(Kubernetes operator): the lock is lockKey, else the target's image, url or "
        "command. Two "
        "teams testing one shared target then never load it together; the later test "
        "waits Queued.",
    )
    lock_key: str | None = Field(
        None,
        min_length=1,
        max_length=253,
        pattern=LOCK_KEY_PATTERN,
        description="The lock this test holds while it runs (implies exclusive): tests "
        "in this namespace with the same key run one at a time, whatever their targets' "
        "images (the key is the namespace's own: other namespaces' tests never share it).",
    )

    def lock(self, namespace: str) -> str | None:
        """The key this test holds while it runs, or None when it takes no lock. A
        `lockKey` is the CR namespace's own (`NAMESPACE/KEY`): a tenant naming another
        team's key cannot hold their tests back. The target-derived lock stays
        cluster-wide, since two teams may test one shared target."""
        if self.lock_key is not None:
            return f"{namespace}/{self.lock_key}"
        if not self.exclusive:
            return None
        if self.from_deployment is not None:
            return f"{namespace}/deployment/{self.from_deployment.name}"
        return self.image or self.url or " ".join(self.command or [])

    @field_validator("pod_template")
    @classmethod
    def _allowed_template(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            problems = template_problems(value)
            if problems:
                raise ValueError("\n".join(problems))
        return value

    @model_validator(mode="after")
    def _how_to_run(self) -> Target:
        _check_value_from(self.env, self.value_from)
        _check_own_variables(self)
        steps = [(f"setup[{i}]", s.name) for i, s in enumerate(self.setup)]
        steps += [(f"teardown[{i}]", s.name) for i, s in enumerate(self.teardown)]
        clashes = duplicate_entries(steps, "setup or teardown step")
        if clashes:
            raise ValueError("\n".join(clashes))
        if self.url is not None and self.replicas > 1:
            raise ValueError(
                "'replicas' applies to a target Plimsoll starts: an existing service (url) "
                "runs as many as it runs; leave replicas out"
            )
        if len(set(self.zones)) != len(self.zones):
            raise ValueError("'zones' names each zone once")
        if len(self.zones) > self.replicas:
            raise ValueError(
                f"{len(self.zones)} zones need at least as many replicas: set replicas to "
                f"{len(self.zones)} or more"
            )
        if self.url is not None:
            if self.image or self.command:
                raise ValueError("give either 'url' (an existing service) or 'image'/'command'")
            if self.from_deployment is not None:
                raise ValueError("give either 'url' (an existing service) or 'fromDeployment'")
            return self
        if self.from_deployment is not None and (self.image or self.command):
            raise ValueError(
                "'fromDeployment' copies the Deployment's image and command: leave out "
                "'image' and 'command' (or fromDeployment)"
            )
        if not self.image and not self.command and self.from_deployment is None:
            raise ValueError(
                "say how to run the target: 'image' (Kubernetes), 'command' (local), "
                "'fromDeployment' (a Deployment's pod, Kubernetes) or 'url' for a service "
                "that already runs"
            )
        if self.resources is None:
            raise ValueError("'resources' (cpu and memory, e.g. '1' and '512Mi') is required")
        return self


# The roles Plimsoll measures under these names (`plimsoll.metrics.source`): a service so
# named would be read as the target, the host, or measuring equipment (a `mock-cache`
# short of CPU made its steps invalid instead of failed).
RESERVED_SERVICE_NAMES = (
    "is reserved: 'target', 'host', and names starting 'mock' or 'generator' are the roles "
    "Plimsoll measures under those names; call the service after what it is (e.g. 'cache')"
)


def reserved_service_name(name: str) -> bool:
    return name in ("target", "host") or name.startswith(("mock", "generator"))


class Service(PlimsollModel):
    """A dependency deployed beside the target and measured like it (PostgreSQL, Valkey)."""

    # The same rule as `_runnable`, so `kubectl apply` refuses it before the operator sees it.
    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.image) || has(self.command)",
                    "message": "a service needs image or command",
                }
            ]
        }
    }

    name: str = Field(
        pattern=NAME_PATTERN,
        max_length=40,
        description="The service's name; its pod, Service and report row are named after it.",
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!(self in ['target', 'host'] || self.startsWith('mock') "
                    "|| self.startsWith('generator'))",
                    "message": RESERVED_SERVICE_NAMES,
                }
            ]
        },
    )
    image: ImageRef | None = Field(None, description="The service's container image (Kubernetes).")
    command: list[str] | None = Field(
        None,
        min_length=1,
        description="'{port}' is filled with its port, '{NAME.port}' with an earlier service's.",
    )
    args: list[str] = Field(
        default_factory=list, description="Arguments after the image's entrypoint or the command."
    )
    env: dict[EnvName, str] = Field(
        default_factory=dict, description="Environment variables of the service."
    )
    value_from: dict[str, EnvSource] = Field(default_factory=dict, description=VALUE_FROM_HELP)
    port: int = Field(
        ge=1,
        le=65535,
        description="Its port. Locally, when it is taken and the service names '{port}', a "
        "free one instead.",
    )
    resources: PodShape | None = None
    readiness_path: str | None = Field(
        None, pattern=PATH_PATTERN, description="HTTP readiness path; without it a TCP connect."
    )
    target_env: dict[EnvName, str] = Field(
        default_factory=dict,
        description="Env the target gets to reach it; '{host}' and '{port}' are filled in.",
    )
    metrics_path: str | None = Field(
        None,
        pattern=PATH_PATTERN,
        description=(
            "A Prometheus exporter (e.g. prometheus-redis-exporter): the local platform's "
            "/metrics relays this path of the service, labelled with the run's namespace "
            "and the service's pod, so spec.metrics.extra can select it."
        ),
    )

    @field_validator("name")
    @classmethod
    def _not_a_role(cls, name: str) -> str:
        if reserved_service_name(name):
            raise ValueError(f"{name!r} {RESERVED_SERVICE_NAMES}")
        return name

    @model_validator(mode="after")
    def _runnable(self) -> Service:
        _check_value_from(self.env, self.value_from)
        if not self.image and not self.command:
            raise ValueError(f"service {self.name!r} needs 'image' or 'command'")
        return self

    def names_its_port(self) -> bool:
        """Whether its command, args or env say `{port}`: it is told where to listen, so
        the local platform may pick a free port when the declared one is taken."""
        parts = [*(self.command or []), *self.args, *self.env.values()]
        return any("{port}" in part for part in parts)

    def with_ports(self, port: int, ports: Mapping[str, int]) -> Service:
        """A copy listening on `port`, with `{port}` (its own) and `{NAME.port}` (a service
        started before it) filled in its command, args and env."""

        def fill(text: str) -> str:
            text = text.replace("{port}", str(port))
            for name, other in ports.items():
                text = text.replace(f"{{{name}.port}}", str(other))
            return text

        return self.model_copy(
            update={
                "port": port,
                "command": [fill(p) for p in self.command] if self.command else None,
                "args": [fill(p) for p in self.args],
                "env": {key: fill(value) for key, value in self.env.items()},
            }
        )
