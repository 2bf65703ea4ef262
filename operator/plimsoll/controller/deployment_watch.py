"""The Deployment a CapacityTest copies, watched for what its spec asks of it.

`trigger.onImageChange`: the image it runs now is part of what the supervisor is
asked to serve (`Desired.trigger_image`), so a new image starts a run.
`contract.annotate`: the proven ceiling is written onto it after a run that found
one, and it is marked unproven once it runs an image no run has passed for
(`plimsoll.decide.contract` decides what the annotations say).

Both read the Deployment every IMAGE_POLL seconds (a GET through the references role
the run binds anyway; never a watch, which would need list and watch rights on every
Deployment of the namespace), and both keep going when it cannot be read or written:
the run's own copy of the Deployment says why, and a contract that cannot be written
is a Warning event on the CapacityTest, never a failed run.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from plimsoll.api.contract import CONTRACT_ANNOTATION, CapacityContract, ContractState
from plimsoll.api.resource import CapacityTest
from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.api.target import Target
from plimsoll.controller.context import OperatorContext
from plimsoll.controller.events import Event, EventRecorder, EventType
from plimsoll.decide import contract as decide_contract
from plimsoll.decide.from_deployment import container_image
from plimsoll.kube.client import KubeError
from plimsoll.kube.grants import GrantError, bind_contract_role
from plimsoll.kube.kinds import DEPLOYMENTS
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.kubernetes.deployment_source import read_deployment

log = logging.getLogger(__name__)
# How often the Deployment is read: a new image starts a run (or marks the contract
# unproven) within this many seconds.
IMAGE_POLL = 15.0


def watched_deployment(test: CapacityTest | None) -> str | None:
    """The Deployment the spec asks to watch, or None: the trigger's, else the copied one
    when the spec keeps a contract on it (the spec's checks make them the same)."""
    if test is None:
        return None
    trigger = test.spec.trigger.on_image_change if test.spec.trigger is not None else None
    if trigger is not None:
        return trigger.deployment
    source = test.spec.target.from_deployment
    if annotates(test) and source is not None:
        return source.name
    return None


def annotates(test: CapacityTest) -> bool:
    return test.spec.contract is not None and test.spec.contract.annotate


class DeploymentWatch:
    """One CapacityTest's view of its Deployment (`trigger_image`), and its contract."""

    def __init__(self, ctx: OperatorContext, owner: dict[str, Any]) -> None:
        self.ctx, self.owner = ctx, owner
        self.namespace: str = owner["metadata"]["namespace"]
        # The watched Deployment's image when the spec has trigger.onImageChange: a new
        # one makes a new Desired, hence a new run. None without a trigger.
        self.trigger_image: str | None = None

    async def read(self, test: CapacityTest | None) -> None:
        """Read the Deployment once: the trigger's image, and the contract's state."""
        name = watched_deployment(test)
        if test is None or name is None:
            self.trigger_image = None
            return
        found = await self._image_and_contract(test, name)
        if found is None:
            return  # the trigger's image kept as it was
        image, current = found
        if test.spec.trigger is not None and test.spec.trigger.on_image_change is not None:
            self.trigger_image = image
        if annotates(test) and image is not None:
            wanted = decide_contract.after_image_read(current, image)
            if wanted is not None:
                await self._write(name, wanted)
            elif current is not None:
                self.ctx.metrics.results.record_contract(self.namespace, name, current)

    async def _image_and_contract(
        self, test: CapacityTest, name: str
    ) -> tuple[str | None, CapacityContract | None] | None:
        """The image the Deployment runs and the contract it carries; None (logged) when
        it cannot be read."""
        try:
            deployment = await read_deployment(
                self.ctx.api(), self.namespace, name, self.ctx.options.identity
            )
        except PlatformError as exc:
            log.warning("deployment %s/%s: %s", self.namespace, name, exc)
            return None
        source = test.spec.target.from_deployment
        image = container_image(deployment, source.container if source else None)
        annotations = (deployment.get("metadata") or {}).get("annotations") or {}
        return image, decide_contract.read_annotation(annotations.get(CONTRACT_ANNOTATION))

    async def prove(
        self, test: CapacityTest, status: CapacityTestStatus, copied: Target | None
    ) -> None:
        """After a run: the contract it proved written onto the Deployment, when the spec
        asks and the run found a ceiling for the target it `copied` (image and shape)."""
        name = watched_deployment(test)
        if not annotates(test) or name is None or status.phase is not Phase.SUCCEEDED:
            return
        if copied is None or copied.resources is None:
            return  # the run never copied the Deployment: it proved nothing of it
        meta = self.owner["metadata"]
        contract = decide_contract.proven(
            status.ceiling,
            copied.resources,
            copied.image,
            run_id=status.run_id or "",
            capacity_test=f"{meta['namespace']}/{meta['name']}",
            at=status.completion_time or datetime.now(UTC),
        )
        if contract is None:
            return
        # A newer image may have rolled out while the run measured this one: then the
        # proof is kept, and the contract says the Deployment's image is unproven.
        found = await self._image_and_contract(test, name)
        image_now = found[0] if found is not None else None
        if image_now is not None:
            contract = decide_contract.after_image_read(contract, image_now) or contract
        await self._write(name, contract)

    async def _write(self, name: str, contract: CapacityContract) -> None:
        client = self.ctx.api()
        patch = {"metadata": {"annotations": decide_contract.contract_annotations(contract)}}
        try:
            await bind_contract_role(client, self.ctx.options.identity, self.namespace)
            await client.patch(DEPLOYMENTS, self.namespace, name, patch)
        except (KubeError, GrantError) as exc:
            message = exc.message if isinstance(exc, KubeError) else str(exc)
            text = f"spec.contract: cannot annotate deployment {self.namespace}/{name}: {message}"
            log.warning("%s", text)
            await EventRecorder(client, self.owner).post(
                Event(EventType.WARNING, "ContractNotWritten", text)
            )
            return
        self.ctx.metrics.results.record_contract(self.namespace, name, contract)
        await EventRecorder(client, self.owner).post(
            Event(EventType.NORMAL, _reason(contract), _sentence(name, contract))
        )


def _reason(contract: CapacityContract) -> str:
    return "CapacityProven" if contract.state is ContractState.PROVEN else "CapacityUnproven"


def _sentence(name: str, contract: CapacityContract) -> str:
    proof = contract.proven
    if contract.state is ContractState.PROVEN and proof is not None:
        return (
            f"deployment {name}: {proof.ceiling} {proof.unit} at {proof.cpu} CPU / "
            f"{proof.memory}, {proof.limited_by.value}-limited, proven for {proof.image}"
        )
    last = f" (last proven: {proof.ceiling} {proof.unit} for {proof.image})" if proof else ""
    return f"deployment {name}: capacity unproven for {contract.image}{last}"
