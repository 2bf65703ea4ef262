"""`spec.generators`: how many load generators a test runs, their shape, when they
count as saturated.

`replicas` is a number, or `auto`: the runner sizes the generators from the
CPU the first step's generators used per unit of load, so that each stays under
`maxCpu / 2` at the next level, and scales them up (never down) before that
step (`plimsoll.decide.generator_count`). Unset, it is `auto` on the local
platform, where a generator is a process started in a second, and 1 on
Kubernetes, where `auto` is not built yet and the platform refuses it by name.
Read by the spec (`plimsoll.api.spec`), the verdict, the platforms and the runner.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import ImageRef
from plimsoll.api.target import PodShape
from plimsoll.api.units import Fraction

AUTO: Literal["auto"] = "auto"
Replicas = Annotated[int, Field(ge=1, le=256)]
Processes = Annotated[int, Field(ge=1, le=64)]


class Generators(PlimsollModel):
    replicas: Replicas | Literal["auto"] | None = Field(
        None,
        description="Load generator pods (local: generator processes), or auto: sized from "
        "the first step's generator CPU per unit of load so each stays under maxCpu / 2, "
        "scaled up before each step and never down. Unset: auto on the local platform, "
        "1 on Kubernetes.",
    )
    processes: Processes | Literal["auto"] | None = Field(
        None,
        description="Worker processes per pod; default one a core. auto (with replicas "
        "auto or unset): one per generator, their count sized as replicas is.",
    )
    max_replicas: int = Field(
        16, ge=1, le=256, description="The most generators replicas: auto may start."
    )
    resources: PodShape | None = None
    image: ImageRef | None = Field(
        None, description="Another generator image; the operator must allow it (allowedImages)."
    )
    max_cpu: Fraction = Field(0.85, description="Above this a generator is saturated: invalid.")
    max_dropped: Fraction = Field(0.01, description="Dropped starts above this: invalid.")

    @field_validator("replicas", "processes", mode="before")
    @classmethod
    def _count_or_auto(cls, value: object, info: ValidationInfo) -> object:
        """One clear line for a bad count, before the union would give one per branch."""
        high = 256 if info.field_name == "replicas" else 64
        if value is None or value == AUTO:
            return value
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
            raise ValueError(f"found {value!r}: a whole number from 1 to {high}, or auto")
        return value

    @model_validator(mode="after")
    def _auto_together(self) -> Generators:
        if self.processes == AUTO and isinstance(self.replicas, int):
            raise ValueError(
                "generators.processes: auto sizes the generators as replicas: auto does; "
                f"with replicas: {self.replicas} set processes to a number, or replicas to auto"
            )
        return self

    def sized(self, auto_by_default: bool) -> bool:
        """Whether the runner sizes the generators: `auto` asked for, or left unset on a
        platform whose default is auto."""
        if self.replicas == AUTO or self.processes == AUTO:
            return True
        return self.replicas is None and auto_by_default

    def asked_auto(self) -> bool:
        """`auto` written in the spec (a platform without it refuses this, not the unset)."""
        return AUTO in (self.replicas, self.processes)

    @property
    def fixed_replicas(self) -> int:
        """The count written, or 1 where it is sized or unset: what starts first."""
        return self.replicas if isinstance(self.replicas, int) else 1

    @property
    def fixed_processes(self) -> int | None:
        """Worker processes per generator: the number written, 1 when sized, None (one a
        core) when unset."""
        if self.processes == AUTO:
            return 1
        return self.processes
