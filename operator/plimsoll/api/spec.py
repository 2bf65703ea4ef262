"""The CapacityTest spec: the target, its shape, its upstream, the load, the bar, the search.

Read top to bottom it is the question a capacity test asks: "how much of this
`workload` can one pod of `target.resources` carry while it still meets
`passWhen`?" Everything a capacity test varies is a field here, so later work fills in
behaviour without reshaping the API.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import (
    URL_PATTERN,
    HourSeconds,
    Level,
    PromQLQuery,
    TrialSeconds,
)
from plimsoll.api.faults import Fault
from plimsoll.api.gate import Regression, Schedule
from plimsoll.api.generators import Generators
from plimsoll.api.notify import Webhook
from plimsoll.api.replay import REPLAY_UNIT
from plimsoll.api.shapes import Cost, Shapes, shape_name, shape_variant
from plimsoll.api.sizing import SizingSpec
from plimsoll.api.target import PodShape, Service, SetupStep, Target
from plimsoll.api.timeline import DEFAULT_SLICE_SECONDS
from plimsoll.api.unique import duplicate_problems, raise_duplicates
from plimsoll.api.units import Fraction, Quantile, Seconds
from plimsoll.api.upstream import NamedUpstream, Upstream
from plimsoll.api.validation_errors import one_line
from plimsoll.api.variant import Variant
from plimsoll.api.workload import LoadModel, Workload

# The target's pieces and the variant live in modules of their own; importers of the spec
# still find them here.
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


class Trial(PlimsollModel):
    duration: TrialSeconds = Field(60.0, description="Measured time of one trial, after warm-up.")
    warm_up: HourSeconds = Field(
        10.0,
        description="Load before the measured part of a trial begins; nothing in it is judged.",
    )
    settle: HourSeconds = Field(0.0, description="Pause between trials so the target drains.")
    faults: list[Fault] = Field(
        default_factory=list,
        max_length=8,
        description="Faults fired during every full trial, e.g. {at: 30s, kill: {replicas: 1}}: "
        "the step then reports the windows before, during and after, each judged on its own.",
    )
    slice: HourSeconds = Field(
        DEFAULT_SLICE_SECONDS,
        description="Width of one slice of each step's timeline (latency and rate over time).",
    )

    @model_validator(mode="after")
    def _positive(self) -> Trial:
        if self.duration <= 0:
            raise ValueError("'duration' must be longer than zero, e.g. '60s'")
        if self.slice < 0.1:
            raise ValueError("'slice' must be at least 100ms, e.g. '1s'")
        late = [f.at for f in self.faults if f.at >= self.duration]
        if late:
            raise ValueError(
                f"a fault at {late[0]:g} s falls after the trial's {self.duration:g} s: "
                "make 'at' shorter than 'duration'"
            )
        return self


class Strategy(StrEnum):
    STEPS = "steps"  # a fixed list of levels, each reported (a fixed table of levels)
    DOUBLING = "doubling"  # double until a failure, then bisect
    PROBE = "probe"  # short probe trials while the bracket is wide, full trials to confirm
    PROVE = "prove"  # one long trial at a planned level: does the plan hold (with its faults)?


class Search(PlimsollModel):
    # Rules the API server checks too; fields may be absent there (defaults are ours).
    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.floor) || !has(self.limit) || self.floor < self.limit",
                    "message": "floor must be below limit",
                },
                {
                    "rule": "!has(self.strategy) || self.strategy != 'steps' || has(self.levels)",
                    "message": "strategy 'steps' needs levels",
                },
                {
                    "rule": "!has(self.strategy) || self.strategy != 'prove' || has(self.level) "
                    "|| (has(self.fromSizing) && self.fromSizing)",
                    "message": "strategy 'prove' needs level or fromSizing: true",
                },
            ]
        }
    }

    strategy: Strategy = Field(
        Strategy.DOUBLING,
        description="How levels are chosen: steps (a fixed list), doubling (double, then bisect), "
        "probe (short trials, then full ones), prove (one long trial at a planned level).",
    )
    level: Level | None = Field(
        None, description="For 'prove': the level of its one trial, e.g. the planned peak."
    )
    from_sizing: bool = Field(
        False,
        description="For 'prove': take the level, replicas and zones from spec.sizing's plan "
        "(its peak × growth, pods and zones), scaled by `scale`.",
    )
    scale: Fraction = Field(
        1.0,
        gt=0,
        description="For 'prove' with fromSizing: the share of the planned peak, and of each "
        "pod's CPU, run here, e.g. 25% so that the plan fits one machine.",
    )
    levels: list[Level] | None = Field(
        None, min_length=1, max_length=500, description="For 'steps'."
    )
    start: Level = Field(100, description="The first level tried.")
    floor: Level = Field(1, description="Lowest level tried when the first step fails.")
    limit: Level = Field(1_000_000, description="Highest level ever tried.")
    precision: Fraction = Field(0.1, description="Stop when first fail / last pass ≤ 1 + this.")
    factor: float = Field(
        2.0,
        ge=1.05,
        le=10,
        allow_inf_nan=False,
        description="The level grows by this factor while steps pass (shrinks by it while they "
        "fail) before the bracket is bisected; 2 doubles. A guided shape search lowers it "
        "where it predicts the ceiling.",
    )
    repeats: int = Field(2, ge=0, le=20, description="Extra runs of the best level for spread.")
    probe_duration: Seconds | None = Field(
        None, description="For 'probe': length of a probe trial (default: a fifth of a trial)."
    )
    max_trials: int = Field(
        40,
        ge=1,
        le=500,
        description="The most trials a variant may run; past it the run stops with the range "
        "found.",
    )

    @model_validator(mode="after")
    def _bounds(self) -> Search:
        if self.strategy is Strategy.STEPS:
            if not self.levels:
                raise ValueError("strategy 'steps' needs 'levels', e.g. [500, 1000, 2000]")
            if any(level < 1 for level in self.levels):
                raise ValueError("every level in 'levels' must be at least 1")
        if self.strategy is Strategy.PROVE and (self.level is None) == (not self.from_sizing):
            raise ValueError(
                "strategy 'prove' needs exactly one of 'level' (e.g. 600) or 'fromSizing: true' "
                "(the level spec.sizing plans)"
            )
        if self.strategy is not Strategy.PROVE and (self.level is not None or self.from_sizing):
            raise ValueError(
                "'level' and 'fromSizing' are for strategy 'prove': set strategy: prove or "
                "leave them out"
            )
        if self.floor >= self.limit:
            raise ValueError(f"'floor' ({self.floor}) must be below 'limit' ({self.limit})")
        if not self.floor <= self.start <= self.limit:
            raise ValueError(
                f"'start' ({self.start}) must lie between 'floor' ({self.floor}) "
                f"and 'limit' ({self.limit})"
            )
        if self.precision <= 0:
            raise ValueError("'precision' must be above 0%, e.g. '10%'")
        return self


class LatencyBound(PlimsollModel):
    """`quantile` of `metric` for `operation` ('*' = all merged) must stay below `below`."""

    operation: str = Field(
        "*",
        description="The operation of workload.mix this bound applies to; '*' merges all of them.",
    )
    quantile: Quantile = Field(description="The quantile judged, e.g. p95 or p99.9.")
    below: Seconds = Field(description="The quantile must stay below this duration, e.g. 50ms.")
    metric: str = Field(
        "total", pattern=r"^(total|ttft|added)$", description="total, ttft, or added latency."
    )

    @field_validator("below", mode="before")
    @classmethod
    def _with_its_unit(cls, value: Any, info: ValidationInfo) -> Any:
        # In a file, `below: 500` reads as 500 seconds, which no one writing a latency bar
        # means, and would pass every level. The API server refuses it (a duration is a
        # string there); a file read locally is refused the same way, naming both readings.
        # Code that builds the model passes seconds as a float, which stays allowed.
        bounded = isinstance(info.context, dict) and info.context.get("bounded")
        if bounded and isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(
                f"{value:g} is a bare number, which would mean {value:g} seconds: write the "
                f"unit, {value:g}ms or {value:g}s"
            )
        return value


class ErrorBounds(PlimsollModel):
    """Highest share of answers of each class a passing step may have."""

    transport: Fraction = Field(0.005, description="Connect, reset, timeout.")
    application: Fraction = Field(1.0, description="Expected errors, e.g. tool errors.")
    unexpected: Fraction = Field(0.001, description="Wrong status or shape.")


class GoodputBound(PlimsollModel):
    """The share of requests that must be good: answered as expected, and within every
    latency bound of their operation (`plimsoll.decide.goodput` says which)."""

    at_least: Fraction = Field(
        description="The lowest share of requests that may be good, e.g. '95%' (SLO attainment).",
    )


class PromQLBound(PlimsollModel):
    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {"rule": "has(self.below) || has(self.above)", "message": "needs below or above"}
            ]
        }
    }

    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_.-]*$",
        description="A name for the bound, shown in verdicts and the report.",
    )
    query: PromQLQuery = Field(
        description="PromQL evaluated over each trial's window; $namespace and $window are filled "
        "in. At most 1024 characters.",
    )
    below: float | None = Field(None, description="The query's value must stay below this.")
    above: float | None = Field(None, description="The query's value must stay above this.")

    @model_validator(mode="after")
    def _a_bound(self) -> PromQLBound:
        if self.below is None and self.above is None:
            raise ValueError(f"promql bound {self.name!r} needs 'below' or 'above'")
        return self


class PassWhen(PlimsollModel):
    """The bar: every criterion a step must hold to pass."""

    latency: list[LatencyBound] = Field(
        default_factory=list, description="Latency bounds, per operation and quantile."
    )
    errors: ErrorBounds = Field(default_factory=ErrorBounds)
    min_achieved: Fraction = Field(0.99, description="Share of the target rate actually sent.")
    max_shed: Fraction = Field(0.0, description="Share of 429/503 answers allowed.")
    healthy_streams: bool = Field(True, description="Held streams keep their keep-alives.")
    goodput: GoodputBound | None = Field(
        None,
        description="A floor on attainment: the share of requests answered as expected and "
        "within every latency bound of their operation, e.g. {atLeast: '95%'}.",
    )
    promql: list[PromQLBound] = Field(
        default_factory=list, description="Bounds on your own PromQL queries, read per step."
    )


class Noise(PlimsollModel):
    """The direct-call floor: a probe to the mock, bypassing the target, during each trial."""

    floor_quantile: Quantile = Field(
        0.99, description="The quantile of the direct-call floor compared with floorBound."
    )
    floor_bound: Seconds | None = Field(
        None, description="Above this the host stalled: the step is noisy and repeated."
    )
    probe_rate: float = Field(20.0, gt=0, le=1000, description="Probe calls per second.")
    retries: int = Field(
        3,
        ge=0,
        le=10,
        description="How often a level's noisy or marginal trial is repeated: a level takes "
        "at most retries + 1 noisy or marginal trials in all, whatever their mix; all noisy, "
        "the run ends inconclusive; any marginal, the level stays marginal.",
    )
    repeat_when_busy: bool = Field(
        True,
        description="A step that fails while the host is busy is noisy and repeated. Off: it "
        "fails, its reasons naming the contention (for smoke tests on shared machines that "
        "check the mechanics, not the figure).",
    )


class ExtraMetric(PlimsollModel):
    """A per-unit cost read per step, e.g. store calls per request or bytes per key."""

    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_.-]*$", description="A name for the figure, shown in the report."
    )
    query: PromQLQuery = Field(
        description="PromQL; $namespace and $window are filled. At most 1024 characters."
    )
    unit: str = Field("", description="The unit it is shown in, e.g. 'calls' or 'bytes'.")
    per: str = Field(
        "none", pattern=r"^(none|request|user|second)$", description="Divide by the level."
    )
    variants: list[str] = Field(
        default_factory=list,
        max_length=16,
        description=(
            "Read only in these variants (empty: in all), e.g. PostgreSQL's calls per "
            "request where only one variant has PostgreSQL: elsewhere it has no series, "
            "and a missing figure makes a step invalid."
        ),
    )


class Metrics(PlimsollModel):
    prometheus_url: str | None = Field(
        None,
        pattern=URL_PATTERN,
        description="The Prometheus to read the target's resources and extra metrics from.",
    )
    scrape_interval: Seconds | None = Field(
        None,
        description="How often Prometheus scrapes the target. Unset: discovered from the "
        "spacing of the samples, else the server's global scrape_interval.",
    )
    settle: Seconds | None = Field(
        None, description="Wait for the last scrape (default one scrape interval plus 1 s)."
    )
    extra: list[ExtraMetric] = Field(
        default_factory=list, description="Per-unit costs read per step with your own PromQL."
    )
    retry_for: Seconds = Field(
        120.0,
        description="How long to keep asking an unreachable Prometheus for a finished "
        "trial's window (it may be restarting) before the step is invalid.",
    )

    def for_variant(self, name: str) -> Metrics:
        """These metrics as the variant `name` reads them: the extra metrics that name it,
        or no variant at all."""
        extra = [m for m in self.extra if not m.variants or name in m.variants]
        return self.model_copy(update={"extra": extra})


class Attribution(PlimsollModel):
    """Thresholds for naming what limited the target."""

    memory_margin: Fraction = Field(0.05, description="Within this of the limit is memory-bound.")
    cpu_busy: Fraction = Field(0.9, description="Mean use above this share of quota: CPU-bound.")
    throttled: Fraction = Field(0.2, description="CFS throttled periods above this: CPU-bound.")
    confirm: bool = Field(
        True,
        description=(
            "Confirm the named limit by experiment: after the search, run the first failing "
            "level again with CPU doubled, then with memory doubled (two trials). Off: the "
            "limit is inferred from the figures alone."
        ),
    )


class Cleanup(StrEnum):
    ALWAYS = "Always"
    ON_SUCCESS = "OnSuccess"
    NEVER = "Never"

    def keeps(self, succeeded: bool) -> bool:
        """Whether a run's pieces (processes, pods, the run namespace) stay once it ended:
        the one rule the runner and the operator both apply."""
        return self is Cleanup.NEVER or (self is Cleanup.ON_SUCCESS and not succeeded)


def _workload_problems(workload: Workload, upstream: Upstream, pass_when: PassWhen) -> list[str]:
    """What does not fit together between the load, the mock and the bar."""
    problems = []
    ops = {op.name for op in workload.mix}
    for bound in pass_when.latency:
        if bound.operation != "*" and bound.operation not in ops:
            problems.append(
                f"passWhen.latency names operation {bound.operation!r}, "
                f"which is not in workload.mix ({sorted(ops)})"
            )
    needs_users = workload.users is None and workload.conversation is None
    if workload.model is LoadModel.USERS and needs_users:
        problems.append("workload model 'users' needs 'users' or 'conversation'")
    tools = {t.name for t in upstream.mcp.tools} if upstream.mcp else set()
    for op in workload.mix:
        if op.tool is not None and op.tool not in tools:
            problems.append(
                f"workload.mix operation {op.name!r} calls tool {op.tool!r}, which "
                f"upstream.mcp.tools does not list ({sorted(tools)})"
            )
    return problems


def _upstreams_problems(upstreams: list[NamedUpstream], target: Target) -> list[str]:
    """Named mocks need names of their own and variables nothing else sets."""
    problems = []
    problems.extend(duplicate_problems([u.name for u in upstreams], "upstreams", "mock"))
    taken = {target.upstream_env: "target.upstreamEnv (the default mock's URL)"}
    if target.port_env:
        taken[target.port_env] = "target.portEnv"
    for key in target.env:
        taken.setdefault(key, "target.env")
    for index, upstream in enumerate(upstreams):
        owner = taken.get(upstream.env_var)
        if owner is not None:
            problems.append(
                f"upstreams[{index}].envVar: {upstream.env_var} is already set by {owner}: "
                "pick another variable for this mock's URL"
            )
        taken[upstream.env_var] = f"upstreams[{index}] ({upstream.name})"
    return problems


def _check_sizing_names(sizing: SizingSpec, variants: list[str], extra: list[str]) -> None:
    """`sizing.variant` and the store's `*Metric` fields must name what the spec holds: a
    plan from a variant or a metric that does not exist would fail only after the run."""
    if sizing.variant is not None and sizing.variant not in variants:
        raise ValueError(
            f"sizing.variant: {sizing.variant!r} names no variant; the variants are "
            f"{variants or '(none)'}"
        )
    store = sizing.store
    if store is None:
        return
    for field, name in (
        ("callsMetric", store.calls_metric),
        ("cpuPerCallMetric", store.cpu_per_call_metric),
        ("bytesPerKeyMetric", store.bytes_per_key_metric),
    ):
        if name is not None and name not in extra:
            raise ValueError(
                f"sizing.store.{field}: {name!r} names no metrics.extra entry; the extra "
                f"metrics are {extra or '(none)'}"
            )


def _check_shapes(spec: CapacityTestSpec) -> None:
    """`shapes` replaces `variants` (each shape is a variant of target.resources alone), needs
    a target Plimsoll starts, and a search must contain the shape it starts from."""
    shapes = spec.shapes
    if shapes is None:
        return
    if spec.variants:
        raise ValueError(
            "shapes and variants: give one of them; each shape is already a variant that "
            "changes only target.resources (compare other changes in a run of their own)"
        )
    if spec.target.url is not None:
        raise ValueError(
            "shapes: target.url drives a service that already runs, whose shape Plimsoll "
            "cannot change; give target.image or target.command"
        )
    search = shapes.search
    start = spec.target.resources
    if search is not None and start is not None:
        if not search.cpu.min <= start.cpu <= search.cpu.max:
            raise ValueError(
                "shapes.search.cpu: the search starts from target.resources.cpu, which lies "
                "outside min … max: widen the range or change target.resources"
            )
        if not search.memory.min <= start.memory <= search.memory.max:
            raise ValueError(
                "shapes.search.memory: the search starts from target.resources.memory, which "
                "lies outside min … max: widen the range or change target.resources"
            )


def _proof_problems(spec: CapacityTestSpec) -> list[str]:
    """`search.fromSizing` plans the replicas, zones and CPU: it needs the plan's inputs and a
    target whose shape it can scale, and leaves the target's own replicas alone."""
    if not spec.search.from_sizing:
        return []
    where = "search.fromSizing"
    problems = []
    if spec.sizing is None:
        problems.append(f"{where}: needs spec.sizing (the plan to prove): add peak and zones")
    elif spec.sizing.per_pod is None:
        problems.append(
            f"{where}: needs spec.sizing.perPod, the per-pod ceiling an earlier run measured "
            "(a proof run measures none)"
        )
    if spec.target.url is not None or spec.target.resources is None:
        problems.append(
            f"{where}: needs a target Plimsoll starts with target.resources, whose CPU it "
            "scales by search.scale"
        )
    if spec.target.replicas != 1 or spec.target.zones:
        problems.append(
            f"{where}: the plan sets the replicas and zones: leave target.replicas and "
            "target.zones out"
        )
    return problems


def _fault_problems(trial: Trial, target: Target) -> list[str]:
    """Each fault must leave a replica running and name a zone the target has."""
    problems = []
    for index, fault in enumerate(trial.faults):
        where = f"trial.faults[{index}]"
        if fault.kill is not None and fault.kill.replicas >= target.replicas:
            problems.append(
                f"{where}.kill.replicas: {fault.kill.replicas} of {target.replicas} "
                "replica(s) would leave none to carry the load: raise target.replicas or "
                "kill fewer"
            )
        if fault.remove is not None:
            zone = fault.remove.zone
            if zone not in target.zones:
                problems.append(
                    f"{where}.remove.zone: {zone!r} is not one of target.zones "
                    f"{target.zones or '(none)'}"
                )
            elif len(target.zones) < 2:
                problems.append(
                    f"{where}.remove.zone: with one zone, removing it leaves no replica: "
                    "add zones to target.zones"
                )
        if fault.restore is not None:
            zone = fault.restore.zone
            removed_before = any(
                f.remove is not None and f.remove.zone == zone and f.at < fault.at
                for f in trial.faults
            )
            if not removed_before:
                problems.append(
                    f"{where}.restore.zone: no earlier fault removes zone {zone!r}: add "
                    f"{{at: ..., remove: {{zone: {zone}}}}} before it, or leave the restore out"
                )
    return problems


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
    notify: list[Webhook] = Field(
        default_factory=list,
        max_length=8,
        description="Webhooks told when a run succeeds or fails, the gate says Regressed, or "
        "a proof's verdict changes (CloudEvents JSON or Slack text; the URL from a Secret).",
    )
    history_limit: int = Field(10, ge=1, le=50, description="Runs kept per variant in history.")
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
            *_workload_problems(self.workload, self.upstream, self.pass_when),
            *_upstreams_problems(self.upstreams, self.target),
            *_fault_problems(self.trial, self.proved_target),
            *_proof_problems(self),
        ]
        if problems:
            raise ValueError("\n".join(problems))
        raise_duplicates([s.name for s in self.services], "services", "service")
        raise_duplicates([v.name for v in self.variants], "variants", "variant")
        _check_shapes(self)
        names = [v.name for v in self.compared_variants]
        if self.sizing is not None:
            _check_sizing_names(self.sizing, names, [m.name for m in self.metrics.extra])
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
                *_workload_problems(seen.workload, seen.upstream, seen.pass_when),
                *_upstreams_problems(seen.upstreams, seen.target),
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
