"""`plimsoll init --deployment NS/NAME`: the Deployment a spec will copy, read as `kubectl`
reads it (the user's kubeconfig and context), checked now as the operator will copy it
(`decide.from_deployment`), with the shape its container runs at in production.

The probe cannot reach a pod from here without a hop of its own in the latency (the API
server's proxy), so it goes through the user's `kubectl port-forward`, given as
`--url`: the figures are the service's own, plus a loopback hop and the forward's."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from plimsoll.api.target import Target
from plimsoll.decide.from_deployment import DeploymentCopyError, container_shape, copied_target
from plimsoll.kube.client import KubeClient, KubeError
from plimsoll.kube.kinds import DEPLOYMENTS
from plimsoll.kube.kubeconfig import KubeconfigError, client_from_kubeconfig

NEEDS_URL = (
    "--deployment needs --url: the probe goes through a port-forward of yours, e.g. "
    "`kubectl port-forward -n {namespace} deployment/{name} 8080:PORT`, then "
    "--url http://127.0.0.1:8080/PATH"
)


class DeploymentInitError(RuntimeError):
    """Why no spec can be written from the Deployment; `invalid`: an option names
    something unusable (exit 2), else the cluster could not be asked (exit 1)."""

    def __init__(self, message: str, *, invalid: bool) -> None:
        super().__init__(message)
        self.invalid = invalid


@dataclass(frozen=True)
class DeploymentSource:
    """What the written spec names: the Deployment, its container and the shape."""

    namespace: str
    name: str
    container: str
    cpu: str
    memory: str
    shape_from_cluster: bool  # False: the pod sets no limits or requests; --cpu/--memory


def parse_reference(text: str) -> tuple[str, str]:
    """NS/NAME as (namespace, name); the CapacityTest goes into NS, where it copies from."""
    namespace, _, name = text.partition("/")
    if not namespace or not name or "/" in name:
        raise DeploymentInitError(
            f"--deployment {text!r}: give NAMESPACE/NAME, e.g. shop/api", invalid=True
        )
    return namespace, name


def read_source(
    reference: str,
    container: str | None,
    kubeconfig: str | None,
    context: str | None,
    fallback: tuple[str, str],
) -> DeploymentSource:
    """The Deployment `reference` names, read and checked; `fallback` (cpu, memory) when
    its container sets no shape."""
    namespace, name = parse_reference(reference)
    try:
        client = client_from_kubeconfig(kubeconfig, context)
    except KubeconfigError as exc:
        raise DeploymentInitError(f"--deployment: {exc}", invalid=False) from exc
    try:
        deployment = asyncio.run(_read(client, namespace, name))
    except KubeError as exc:
        raise DeploymentInitError(
            f"--deployment: cannot read deployment {namespace}/{name}: {exc.message}",
            invalid=False,
        ) from exc
    if deployment is None:
        raise DeploymentInitError(
            f"--deployment: no deployment {name!r} in namespace {namespace!r}", invalid=True
        )
    try:
        found = container_shape(deployment, container)
        cpu, memory = found.cpu or fallback[0], found.memory or fallback[1]
        target = Target.model_validate(
            {
                "fromDeployment": {"name": name, "container": container},
                "resources": {"cpu": cpu, "memory": memory},
            }
        )
        copied_target(target, deployment)  # what the operator will refuse, refused now
    except DeploymentCopyError as exc:
        problems = "; ".join(exc.problems)
        raise DeploymentInitError(f"--deployment: {problems}", invalid=True) from exc
    return DeploymentSource(
        namespace=namespace,
        name=name,
        container=found.name,
        cpu=cpu,
        memory=memory,
        shape_from_cluster=found.cpu is not None and found.memory is not None,
    )


async def _read(client: KubeClient, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return await client.get(DEPLOYMENTS, namespace, name)
    finally:
        await client.aclose()
