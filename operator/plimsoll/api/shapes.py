"""`spec.shapes` and `spec.cost`: which pod shapes to measure, and what a shape costs.

A shape is a variant that changes only `target.resources`; `shape_variant` makes
that variant, so the runner, the platforms and the comparison treat a shape like
any other variant. `spec.shapes` either lists the shapes (`explicit`) or bounds a
guided search (`search`: a grid of CPU and memory sizes, walked by
`plimsoll.decide.shapes` from what limited each measured shape). `spec.cost`
prices a shape per hour; its defaults are list prices, stated as assumptions in
docs/how-to/shapes.md. The per-shape results (`ShapeResult`) go to the report
and, compacted, to `status.shapes`.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import PodMemory
from plimsoll.api.step import LimitedBy
from plimsoll.api.target import PodShape
from plimsoll.api.units import Cores, format_cpu, format_memory
from plimsoll.api.variant import Variant

GIB = 2**30

# GKE Autopilot general-purpose Pod on-demand list prices, us-central1 (source and date:
# docs/how-to/shapes.md, "Prices"): a pod is billed for exactly its requests, the model here.
DEFAULT_PER_CPU_HOUR = 0.0445
DEFAULT_PER_GIB_HOUR = 0.0049225
HOURS_PER_MONTH = 730.0  # 365 × 24 / 12, the convention of cloud price lists


class CpuRange(PlimsollModel):
    """The CPU sizes a shape search may choose from: min … max, both included."""

    min: Cores = Field(description="The smallest CPU a shape may have, e.g. '250m'.")
    max: Cores = Field(description="The largest CPU a shape may have, e.g. '4'.")

    @model_validator(mode="after")
    def _ordered(self) -> CpuRange:
        if self.min > self.max:
            raise ValueError(
                f"cpu.min ({format_cpu(self.min)}) is above cpu.max ({format_cpu(self.max)}): "
                "swap them"
            )
        return self


class MemoryRange(PlimsollModel):
    """The memory sizes a shape search may choose from: min … max, both included."""

    min: PodMemory = Field(description="The smallest memory a shape may have, e.g. '256Mi'.")
    max: PodMemory = Field(description="The largest memory a shape may have, e.g. '4Gi'.")

    @model_validator(mode="after")
    def _ordered(self) -> MemoryRange:
        if self.min > self.max:
            raise ValueError(
                f"memory.min ({format_memory(self.min)}) is above memory.max "
                f"({format_memory(self.max)}): swap them"
            )
        return self


class ShapeSearch(PlimsollModel):
    """A guided search over a grid of shapes: `steps` CPU sizes × `steps` memory sizes, each
    the one before times a constant factor, from min to max."""

    cpu: CpuRange = Field(description="The CPU sizes to choose from.")
    memory: MemoryRange = Field(description="The memory sizes to choose from.")
    steps: int = Field(
        3,
        ge=2,
        le=8,
        description="Sizes per resource between min and max (geometric: 3 over 500m … 2 gives "
        "500m, 1, 2).",
    )
    max_shapes: int = Field(
        6, ge=2, le=16, description="The most shapes measured before the search stops."
    )


class Shapes(PlimsollModel):
    """The pod shapes to compare: a list, or a guided search. Each is a variant that changes
    only target.resources."""

    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.explicit) != has(self.search)",
                    "message": "give either explicit (a list of shapes) or search, not both",
                },
            ]
        }
    }

    explicit: list[PodShape] | None = Field(
        None,
        min_length=1,
        max_length=16,
        description="The shapes to measure, each {cpu, memory}; the first is the baseline. "
        "One shape alone is priced, not compared.",
    )
    search: ShapeSearch | None = Field(
        None,
        description="A guided search from target.resources: each next shape follows from "
        "what limited the ones measured.",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Shapes:
        if (self.explicit is None) == (self.search is None):
            raise ValueError(
                "give either 'explicit' (a list of {cpu, memory}) or 'search' "
                "({cpu: {min, max}, memory: {min, max}}), not both and not neither"
            )
        if self.explicit is not None:
            names = [shape_name(s) for s in self.explicit]
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"explicit lists the shape {twice} more than once")
        return self


class Cost(PlimsollModel):
    """What one pod shape costs per hour: its CPU and its memory at these prices."""

    currency: str = Field("$", max_length=8, description="Shown before every price, e.g. '$'.")
    per_cpu_hour: float = Field(
        DEFAULT_PER_CPU_HOUR,
        gt=0,
        le=1000,
        allow_inf_nan=False,
        description="The price of one core for one hour (default: a list price, see the docs).",
    )
    per_gib_hour: float = Field(
        DEFAULT_PER_GIB_HOUR,
        gt=0,
        le=1000,
        allow_inf_nan=False,
        description="The price of one GiB of memory for one hour (default: a list price).",
    )

    def per_hour(self, shape: PodShape) -> float:
        """The hourly price of one pod of `shape`."""
        return shape.cpu * self.per_cpu_hour + shape.memory / GIB * self.per_gib_hour


def shape_name(shape: PodShape) -> str:
    """The variant name of a shape: 'c500m-m512mi' (lower case, as names must be)."""
    return f"c{format_cpu(shape.cpu)}-m{format_memory(shape.memory).lower()}"


def shape_label(shape: PodShape) -> str:
    """A shape as people write it: '500m CPU / 512Mi'."""
    cpu = format_cpu(shape.cpu)
    return f"{cpu} CPU / {format_memory(shape.memory)}"


def shape_variant(shape: PodShape) -> Variant:
    """The variant that runs the target at `shape` and changes nothing else."""
    return Variant(name=shape_name(shape), description=shape_label(shape), resources=shape)


class ShapeResult(PlimsollModel):
    """One measured shape in the report's cost table."""

    name: str = Field(description="The shape's variant name, e.g. 'c1-m512mi'.")
    label: str = Field(description="The shape as people write it: '1 CPU / 512Mi'.")
    cpu: Cores = Field(description="The shape's CPU.")
    memory: PodMemory = Field(description="The shape's memory.")
    ceiling: int | None = Field(None, description="Its measured ceiling; None if none passed.")
    unit: str = Field(description="The ceiling's unit: rps or users.")
    complete: bool = Field(description="False when its search stopped with a range only.")
    limited_by: LimitedBy = Field(description="What limited it: memory, cpu, neither, unknown.")
    headroom: str = Field("", description="The room left at its ceiling, in words.")
    predicted: int | None = Field(
        None, description="The ceiling the guided search predicted before measuring it."
    )
    cost_per_hour: float = Field(description="One pod of this shape for an hour.")
    cost_per_thousand: float | None = Field(
        None, description="Cost per hour of 1,000 units of load (rps or users) at the ceiling."
    )
    replicas: int | None = Field(
        None, description="Pods to carry sizing.peak over sizing.zones (a zone's loss included)."
    )
    monthly_cost: float | None = Field(None, description="Those pods for a month (730 hours).")
    cheapest: bool = Field(False, description="The cheapest measured shape per unit of load.")


class ShapeStatus(PlimsollModel):
    """One shape in `status.shapes`: its ceiling, what limited it and its cost per unit."""

    name: str = Field(description="The shape's variant name.")
    cpu: Cores = Field(description="The shape's CPU.")
    memory: PodMemory = Field(description="The shape's memory.")
    ceiling: int | None = Field(None, description="Its ceiling; None if none passed.")
    limited_by: LimitedBy = Field(description="What limited it at its ceiling.")
    cost_per_thousand: float | None = Field(
        None, description="Cost per hour of 1,000 units of load at its ceiling."
    )
    replicas: int | None = Field(None, description="Pods to carry sizing.peak, if planned.")
    cheapest: bool = Field(False, description="The cheapest shape per unit of load.")

    @classmethod
    def of(cls, result: ShapeResult) -> ShapeStatus:
        """The result's fields of the same name."""
        return cls(**result.model_dump(include=set(cls.model_fields)))


class ShapeTable(PlimsollModel):
    """The shapes side by side: the cost table, the cheapest, and why the search stopped."""

    rows: list[ShapeResult] = Field(default_factory=list, description="One per measured shape.")
    cheapest: str | None = Field(None, description="The cheapest shape's name, if any passed.")
    headline: str = Field("", description="The sentence naming the cheapest shape.")
    guided: bool = Field(False, description="True when a guided search chose the shapes.")
    chosen: list[PodShape] = Field(
        default_factory=list, description="The shapes the guided search chose, in order."
    )
    predicted: dict[str, int] = Field(
        default_factory=dict, description="The ceiling predicted for each guided shape, by name."
    )
    stop_reason: str = Field("", description="Why the guided search measured no more shapes.")
    latency_bound: bool = Field(
        False, description="The search stopped because neither CPU nor memory limited a shape."
    )
