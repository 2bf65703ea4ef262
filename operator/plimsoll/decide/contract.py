"""What the Deployment's capacity contract should say (`spec.contract.annotate`): pure.

Two moments change it. A run ends: if it found a ceiling (a level passed and one
failed above it, not inconclusive), the contract is proven for the image the run
copied. The Deployment is read (every IMAGE_POLL seconds) and runs an image the
contract was not proven for: it is unproven, the last proof kept beside it, until a
run passes for the new image. Each returns the contract to write, or None when the
annotation already says it (no write, so a quiet Deployment is never patched).
"""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import ValidationError

from plimsoll.api.contract import (
    CONTRACT_ANNOTATION,
    STATE_ANNOTATION,
    CapacityContract,
    ContractState,
    ProvenCapacity,
)
from plimsoll.api.status import Ceiling
from plimsoll.api.target import PodShape
from plimsoll.api.units import format_cpu, format_memory


def proven(
    ceiling: Ceiling | None,
    shape: PodShape,
    image: str | None,
    *,
    run_id: str,
    capacity_test: str,
    at: datetime,
) -> CapacityContract | None:
    """The contract a finished run proves, or None when it proved nothing: no ceiling,
    only a range or a lower bound ("at least"), a busy host, or no image known."""
    if ceiling is None or ceiling.level is None or image is None:
        return None
    if not ceiling.complete or ceiling.inconclusive or ceiling.every_level_passed:
        return None
    confirmation = ceiling.confirmation
    proof = ProvenCapacity(
        image=image,
        ceiling=ceiling.level,
        unit=ceiling.unit,
        cpu=format_cpu(shape.cpu),
        memory=format_memory(shape.memory),
        limited_by=ceiling.limited_by,
        finding=confirmation.finding if confirmation is not None else None,
        run_id=run_id,
        capacity_test=capacity_test,
        at=at,
    )
    return CapacityContract(state=ContractState.PROVEN, image=image, proven=proof)


def after_image_read(current: CapacityContract | None, image: str) -> CapacityContract | None:
    """The contract once the Deployment is seen running `image`: unproven when no proof
    is for that image (the last proof kept); None when the annotation already says so."""
    proof = current.proven if current is not None else None
    for_this_image = proof is not None and proof.image == image
    state = ContractState.PROVEN if for_this_image else ContractState.UNPROVEN
    wanted = CapacityContract(state=state, image=image, proven=proof)
    return None if current == wanted else wanted


def read_annotation(value: str | None) -> CapacityContract | None:
    """The contract a Deployment's annotation holds; None when absent or not one of ours
    (hand-edited, another version's): the next write replaces it."""
    if not value:
        return None
    try:
        return CapacityContract.model_validate(json.loads(value))
    except (ValueError, ValidationError):
        return None


def contract_annotations(contract: CapacityContract) -> dict[str, str]:
    """The two annotations that carry `contract`."""
    body = contract.model_dump_json(by_alias=True, exclude_none=True)
    return {STATE_ANNOTATION: contract.state.value, CONTRACT_ANNOTATION: body}
