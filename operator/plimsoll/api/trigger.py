"""`spec.trigger`: what starts a run besides a new generation, the rerun annotation and
the schedule. `onImageChange`: a run whenever the Deployment the target copies
(`target.fromDeployment`) runs a new image, so every release is measured as it ships."""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.target import NAME_PATTERN


class OnImageChange(PlimsollModel):
    deployment: str = Field(
        min_length=1,
        max_length=253,
        pattern=NAME_PATTERN,
        description="The Deployment watched, in the CapacityTest's own namespace: the one "
        "target.fromDeployment names, so the run measures the image that triggered it.",
    )


class Trigger(PlimsollModel):
    on_image_change: OnImageChange | None = Field(
        None,
        description="Start a run when the Deployment's image changes (read every "
        "15 s; the run is queued like any other).",
    )
