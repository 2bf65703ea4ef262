"""`target.fromDeployment`: the target copied from a Deployment in the CapacityTest's own
namespace, read with the operator's references role there (`decide.from_deployment`
decides what is copied and what is refused)."""

from __future__ import annotations

from typing import Any

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.from_deployment import copied_target
from plimsoll.kube.client import KubeClient
from plimsoll.kube.grants import OperatorIdentity, bind_references_role
from plimsoll.kube.kinds import DEPLOYMENTS
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.kubernetes.errors import platform_errors


async def read_deployment(
    client: KubeClient, namespace: str, name: str, identity: OperatorIdentity | None
) -> dict[str, Any]:
    """The Deployment `name` in `namespace` (the CapacityTest's own), read through the
    operator's references role there (bound first, `get` only); PlatformError naming why
    it cannot be read or is not there."""
    with platform_errors(f"spec.target.fromDeployment: cannot read deployment {namespace}/{name}"):
        await bind_references_role(client, identity, namespace)
        deployment = await client.get(DEPLOYMENTS, namespace, name)
    if deployment is None:
        raise PlatformError(
            f"spec.target.fromDeployment: no deployment {name!r} in {namespace} "
            "(it is read from the CapacityTest's own namespace)"
        )
    return deployment


async def with_deployment_target(
    client: KubeClient,
    spec: CapacityTestSpec,
    namespace: str,
    identity: OperatorIdentity | None,
) -> CapacityTestSpec:
    """`spec` with its target copied from the Deployment `target.fromDeployment` names in
    `namespace` (the CapacityTest's own)."""
    source = spec.target.from_deployment
    assert source is not None
    deployment = await read_deployment(client, namespace, source.name, identity)
    swapped = {named.env_var for named in spec.upstreams}
    with platform_errors():
        target = copied_target(spec.target, deployment, swapped)
    return spec.model_copy(update={"target": target})
