"""The CapacityTest spec: the target, its shape, its upstream, the load, the bar, the search.

Read top to bottom it is the question a capacity test asks: "how much of this
`workload` can one pod of `target.resources` carry while it still meets
`passWhen`?" Everything a capacity test varies is a field here, so later work fills in
behaviour without reshaping the API.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from plimsoll.api import spec_checks
from plimsoll.api.autoscale import Autoscale
from plimsoll.api.base import PlimsollModel
from plimsoll.api.contract import Contract
from plimsoll.api.gate import Regression, Schedule
from plimsoll.api.generators import Generators
from plimsoll.api.measuring import Attribution, ExtraMetric, Metrics, Noise
from plimsoll.api.notify import Webhook
from plimsoll.api.pass_when import ErrorBounds, GoodputBound, LatencyBound, PassWhen, PromQLBound
from plimsoll.api.replay import REPLAY_UNIT
from plimsoll.api.search_spec import Search, Strategy, Trial
from plimsoll.api.shapes import Cost, Shapes, shape_name, shape_variant
from plimsoll.api.sizing import SizingSpec
from plimsoll.api.target import PodShape, Service, SetupStep, Target
from plimsoll.api.trigger import Trigger
from plimsoll.api.unique import raise_duplicates
from plimsoll.api.upstream import NamedUpstream, Upstream
from plimsoll.api.validation_errors import one_line
from plimsoll.api.variant import Variant
from plimsoll.api.workload import LoadModel, Workload

# The target's pieces, the variant, the search and trial, the bar and how steps are
# measured live in modules of their own; importers of the spec still find them here.
__all__ = [
    "Attribution",
    "CapacityTestSpec",
    "Cleanup",
    "ErrorBounds",
    "ExtraMetric",
    "Generators",
    "GoodputBound",
    "LatencyBound",
    "Metrics",
    "Noise",
    "PassWhen",
    "PodShape",
    "PromQLBound",
    "Search",
    "Service",
    "SetupStep",
    "Strategy",
    "Trial",
    "Variant",
]


class Cleanup(StrEnum):
    ALWAYS = "Always"
    ON_SUCCESS = "OnSuccess"
    NEVER = "Never"

    def keeps(self, succeeded: bool) -> bool:
        """Whether a run's pieces (processes, pods, the run namespace) stay once it ended:
        the one rule the runner and the operator both apply."""
        return self is Cleanup.NEVER or (self is Cleanup.ON_SUCCESS and not succeeded)


class CapacityTestSpec(PlimsollModel):
    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.baseline) || has(self.shapes) || "
                    "(has(self.variants) && self.variants.exists(v, v.name == self.baseline))",
                    "message": "baseline must name one of the variants",
                },
                {
                    "rule": "!has(self.shapes) || !has(self.variants) || size(self.variants) == 0",
                    "message": "give either shapes or variants: each shape is a variant",
                },
            ]
        }
    }

    target: Target
    services: list[Service] = Field(
        default_factory=list,
        description="Dependencies deployed beside the target and measured like it (PostgreSQL, "
        "Redis).",
    )
    upstream: Upstream = Field(default_factory=Upstream)
    upstreams: list[NamedUpstream] = Field(
        default_factory=list,
        max_length=8,
        description="More mocks beside `upstream` (auth, metering): each its own routes, "
        "processes or pods, and the target env var that receives its URL.",
    )
    workload: Workload = Field(
        description="The load: protocol, model (open rate or modeled users) and the request mix."
    )
    trial: Trial = Field(default_factory=Trial, description="How long each trial lasts.")
    search: Search = Field(
        default_factory=Search,
        description="How the levels of the trials are chosen and when the ceiling is known.",
    )
    pass_when: PassWhen = Field(default_factory=PassWhen)
    noise: Noise = Field(default_factory=Noise)
    metrics: Metrics = Field(
        default_factory=Metrics,
        description="Where the target's resources are read, and the extra figures to read.",
    )
    generators: Generators = Field(
        default_factory=Generators,
        description="The load generators: how many, their shape, when they count as saturated.",
    )
    attribution: Attribution = Field(default_factory=Attribution)
    variants: list[Variant] = Field(
        default_factory=list,
        max_length=16,
        description="Configurations of the same target tested side by side, each changing what it "
        "names.",
    )
    baseline: str | None = Field(
        None, description="The variant the others are compared against (default: the first)."
    )
    cleanup: Cleanup = Field(
        Cleanup.ALWAYS,
        description="When the run's namespace is deleted: Always, OnSuccess or Never.",
    )
    regression: Regression | None = Field(
        None, description="Hold each new ceiling against a baseline (see status.regression)."
    )
    schedule: Schedule | None = Field(None, description="Re-run on a cron schedule.")
    trigger: Trigger | None = Field(
        None, description="Start a run on an event: the target's Deployment runs a new image."
    )
    contract: Contract | None = Field(
        None,
        description="Keep the proven capacity on the Deployment the target copies: "
        "annotations, and 'unproven' once it runs an image no run has passed for.",
    )
    notify: list[Webhook] = Field(
        default_factory=list,
        max_length=8,
        description="Webhooks told when a run succeeds or fails, the gate says Regressed, or "
        "a proof's verdict changes (CloudEvents JSON or Slack text; the URL from a Secret).",
    )
    history_limit: int = Field(10, ge=1, le=50, description="Runs kept per variant in history.")
    autoscale: Autoscale | None = Field(
        None,
        description="For search.strategy autoscale: the per-pod ceiling the flight counts "
        "pods against, and the share of requests that may fail.",
    )
    sizing: SizingSpec | None = Field(
        None, description="Plan a deployment from the ceiling: the plan goes to status and report."
    )
    shapes: Shapes | None = Field(
        None,
        description="Compare pod shapes (a list, or a guided search): each is a variant that "
        "changes only target.resources; the report names the cheapest per unit of load.",
    )
    cost: Cost = Field(
        default_factory=Cost,
        description="Prices of CPU and memory per hour, for the shapes' cost table.",
    )

    @model_validator(mode="after")
    def _cross_field(self) -> CapacityTestSpec:
        problems = [
            *spec_checks.workload_problems(self.workload, self.upstream, self.pass_when),
            *spec_checks.upstreams_problems(self.upstreams, self.target),
            *spec_checks.fault_problems(self.trial, self.proved_target),
            *spec_checks.proof_problems(self),
            *spec_checks.trigger_problems(self),
            *spec_checks.contract_problems(self),
            *spec_checks.autoscale_problems(self),
        ]
        if problems:
            raise ValueError("\n".join(problems))
        raise_duplicates([s.name for s in self.services], "services", "service")
        raise_duplicates([v.name for v in self.variants], "variants", "variant")
        spec_checks.check_shapes(self)
        names = [v.name for v in self.compared_variants]
        if self.sizing is not None:
            spec_checks.check_sizing_names(self.sizing, names, [m.name for m in self.metrics.extra])
        if self.baseline is not None and self.baseline not in names:
            raise ValueError(
                f"baseline {self.baseline!r} names no variant; the variants are {names or '(none)'}"
            )
        for index, metric in enumerate(self.metrics.extra):
            unknown = [name for name in metric.variants if name not in names]
            if unknown:
                raise ValueError(
                    f"metrics.extra[{index}].variants: {unknown} name no variant; the "
                    f"variants are {names or '(none)'}"
                )
        for index, variant in enumerate(self.compared_variants):
            try:
                seen = self.for_variant(variant)
            except ValueError as exc:  # pydantic's ValidationError is one too
                raise ValueError(f"variants[{index}] ({variant.name}): {one_line(exc)}") from exc
            problems = [
                *spec_checks.workload_problems(seen.workload, seen.upstream, seen.pass_when),
                *spec_checks.upstreams_problems(seen.upstreams, seen.target),
            ]
            if seen.unit != self.unit:
                problems.append(
                    f"its workload counts {seen.unit}, the spec's {self.unit}: variants are "
                    "compared in one unit, so keep workload.model the same"
                )
            if problems:
                raise ValueError(f"variants[{index}] ({variant.name}): " + "; ".join(problems))
        return self

    @property
    def proved_target(self) -> Target:
        """The target as a proof run from the sizing plan sees its zones (a, b, c, ...), for
        the checks of the faults; the replicas and CPU are planned by
        `plimsoll.decide.proof_plan`, which needs the sizing arithmetic."""
        if not self.search.from_sizing or self.sizing is None:
            return self.target
        zones = self.sizing.zone_names()
        return self.target.model_copy(update={"zones": zones, "replicas": max(16, len(zones))})

    @property
    def unit(self) -> str:
        """What a level counts: 'users' or 'rps'."""
        if self.workload.model is LoadModel.REPLAY:
            return REPLAY_UNIT
        return "users" if self.workload.model is LoadModel.USERS else "rps"

    def for_variant(self, variant: Variant) -> CapacityTestSpec:
        """The spec as `variant` sees it: its target, services, upstream and workload, with
        everything it does not name inherited, and only the extra metrics read in it.
        Called by the validator (each variant's spec must hold together) and by
        `variant_specs`; everyone else takes the specs the runner derived once."""
        return self.model_copy(
            update={
                "target": variant.target_for(self.target),
                "services": variant.services_for(self.services),
                "upstream": variant.upstream or self.upstream,
                "workload": variant.workload or self.workload,
                "metrics": self.metrics.for_variant(variant.name),
            }
        )

    @property
    def compared_variants(self) -> list[Variant]:
        """The variants measured side by side: `variants`, or one per shape of
        `shapes.explicit` (a guided `shapes.search` chooses its shapes as it goes:
        `plimsoll.run.shapes`)."""
        if self.shapes is not None and self.shapes.explicit is not None:
            return [shape_variant(shape) for shape in self.shapes.explicit]
        return list(self.variants)

    def variant_specs(self) -> dict[str, CapacityTestSpec]:
        """Every variant's spec by name, in the spec's order; {'default': self} without
        variants. The runner derives them once per run and hands each to the platform, the
        namespace budget and the report, so all of them read the same thing."""
        variants = self.compared_variants
        if not variants:
            return {"default": self}
        return {variant.name: self.for_variant(variant) for variant in variants}

    def narrowed_to(self, name: str) -> CapacityTestSpec:
        """The spec with only the variant `name` (`plimsoll run --variant`): the extra
        metrics meant for the others go with them, and a baseline that is not this variant
        has nothing to be compared with. Raises KeyError for a name it does not hold.
        With `shapes.explicit` the name is a shape's (`shape_name`); a guided
        `shapes.search` names its shapes as it goes, so its caller finds the shape in the
        search's grid and calls `measuring_only`."""
        if self.shapes is not None and self.shapes.explicit is not None:
            shapes = [s for s in self.shapes.explicit if shape_name(s) == name]
            if not shapes:
                raise KeyError(name)
            return self.measuring_only(shapes[0])
        chosen = [v for v in self.variants if v.name == name]
        if not chosen:
            raise KeyError(name)
        return self.model_copy(
            update={
                "variants": chosen,
                "metrics": self.metrics.for_variant(name),
                "baseline": self.baseline if self.baseline == name else None,
            }
        )

    def measuring_only(self, shape: PodShape) -> CapacityTestSpec:
        """The spec that measures `shape` alone, as a list of one shape, so the report still
        prices it (`plimsoll run --variant` with `shapes`)."""
        name = shape_name(shape)
        return self.model_copy(
            update={
                "shapes": Shapes(explicit=[shape]),
                "metrics": self.metrics.for_variant(name),
                "baseline": self.baseline if self.baseline == name else None,
            }
        )

    @property
    def baseline_name(self) -> str:
        """The variant the others are compared against: `baseline`, else the first."""
        if self.baseline is not None:
            return self.baseline
        variants = self.compared_variants
        if variants:
            return variants[0].name
        if self.shapes is not None and self.shapes.search is not None:
            return shape_name(self.target.resources) if self.target.resources else "default"
        return "default"
