"""The CapacityTest spec: the target, its shape, its upstream, the load, the bar, the search.

Read top to bottom it is the question a capacity test asks: "how much of this
`workload` can one pod of `target.resources` carry while it still meets
`passWhen`?" Everything a capacity test varies is a field here, so later work fills in
behaviour without reshaping the API.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.units import Bytes, Cores, Fraction, Quantile, Seconds
from plimsoll.api.upstream import Upstream
from plimsoll.api.workload import LoadModel, Workload

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class PodShape(PlimsollModel):
    """The pod shape to pin to: requests == limits (Kubernetes' Guaranteed QoS)."""

    cpu: Cores
    memory: Bytes


class SetupStep(PlimsollModel):
    """A job run to completion before the first trial, e.g. seeding a store."""

    name: str = Field(pattern=NAME_PATTERN, max_length=40)
    image: str | None = None
    command: list[str] = Field(min_length=1)
    env: dict[str, str] = Field(default_factory=dict)
    timeout: Seconds = 600.0


class Target(PlimsollModel):
    """The service under test: an image (Kubernetes), a command (local), or a URL."""

    model_config = {
        "json_schema_extra": {
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.url) || has(self.image) || has(self.command)",
                    "message": "say how to run the target: image, command or url",
                },
                {
                    "rule": "has(self.url) || has(self.resources)",
                    "message": "resources (cpu and memory) are required to pin the target",
                },
            ]
        }
    }

    image: str | None = None
    command: list[str] | None = Field(None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    port: int = Field(8080, ge=1, le=65535)
    resources: PodShape | None = None
    readiness_path: str = Field("/healthz", pattern=r"^/")
    startup_timeout: Seconds = 60.0
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
    setup: list[SetupStep] = Field(default_factory=list)
    pod_template: dict[str, Any] | None = Field(
        None, description="Merged into the target's pod template (Kubernetes only)."
    )
    url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="Drive an existing service: nothing is started or pinned.",
    )

    @model_validator(mode="after")
    def _how_to_run(self) -> Target:
        if self.url is not None:
            if self.image or self.command:
                raise ValueError("give either 'url' (an existing service) or 'image'/'command'")
            return self
        if not self.image and not self.command:
            raise ValueError(
                "say how to run the target: 'image' (Kubernetes), 'command' (local), "
                "or 'url' for a service that already runs"
            )
        if self.resources is None:
            raise ValueError("'resources' (cpu and memory, e.g. '1' and '512Mi') is required")
        return self


class Service(PlimsollModel):
    """A dependency deployed beside the target and measured like it (PostgreSQL, Valkey)."""

    name: str = Field(pattern=NAME_PATTERN, max_length=40)
    image: str | None = None
    command: list[str] | None = Field(None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    port: int = Field(ge=1, le=65535)
    resources: PodShape | None = None
    readiness_path: str | None = Field(
        None, pattern=r"^/", description="HTTP readiness path; without it a TCP connect."
    )
    target_env: dict[str, str] = Field(
        default_factory=dict,
        description="Env the target gets to reach it; '{host}' and '{port}' are filled in.",
    )

    @model_validator(mode="after")
    def _runnable(self) -> Service:
        if not self.image and not self.command:
            raise ValueError(f"service {self.name!r} needs 'image' or 'command'")
        return self


class Trial(PlimsollModel):
    duration: Seconds = Field(60.0, description="Measured time of one trial, after warm-up.")
    warm_up: Seconds = 10.0
    settle: Seconds = Field(0.0, description="Pause between trials so the target drains.")

    @model_validator(mode="after")
    def _positive(self) -> Trial:
        if self.duration <= 0:
            raise ValueError("'duration' must be longer than zero, e.g. '60s'")
        return self


class Strategy(StrEnum):
    STEPS = "steps"  # a fixed list of levels, each reported (a fixed table of levels)
    DOUBLING = "doubling"  # double until a failure, then bisect
    PROBE = "probe"  # short probe trials while the bracket is wide, full trials to confirm


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
            ]
        }
    }

    strategy: Strategy = Strategy.DOUBLING
    levels: list[int] | None = Field(None, min_length=1, description="For 'steps'.")
    start: int = Field(100, ge=1)
    floor: int = Field(1, ge=1, description="Lowest level tried when the first step fails.")
    limit: int = Field(1_000_000, ge=1, description="Highest level ever tried.")
    precision: Fraction = Field(0.1, description="Stop when first fail / last pass ≤ 1 + this.")
    repeats: int = Field(2, ge=0, le=20, description="Extra runs of the best level for spread.")
    probe_duration: Seconds | None = Field(
        None, description="For 'probe': length of a probe trial (default: a fifth of a trial)."
    )
    max_trials: int = Field(40, ge=1, le=500)

    @model_validator(mode="after")
    def _bounds(self) -> Search:
        if self.strategy is Strategy.STEPS:
            if not self.levels:
                raise ValueError("strategy 'steps' needs 'levels', e.g. [500, 1000, 2000]")
            if any(level < 1 for level in self.levels):
                raise ValueError("every level in 'levels' must be at least 1")
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

    operation: str = "*"
    quantile: Quantile
    below: Seconds
    metric: str = Field(
        "total", pattern=r"^(total|ttft|added)$", description="total, ttft, or added latency."
    )


class ErrorBounds(PlimsollModel):
    """Highest share of answers of each class a passing step may have."""

    transport: Fraction = Field(0.005, description="Connect, reset, timeout.")
    application: Fraction = Field(1.0, description="Expected errors, e.g. tool errors.")
    unexpected: Fraction = Field(0.001, description="Wrong status or shape.")


class PromQLBound(PlimsollModel):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    query: str = Field(min_length=1)
    below: float | None = None
    above: float | None = None

    @model_validator(mode="after")
    def _a_bound(self) -> PromQLBound:
        if self.below is None and self.above is None:
            raise ValueError(f"promql bound {self.name!r} needs 'below' or 'above'")
        return self


class PassWhen(PlimsollModel):
    """The bar: every criterion a step must hold to pass."""

    latency: list[LatencyBound] = Field(default_factory=list)
    errors: ErrorBounds = Field(default_factory=ErrorBounds)
    min_achieved: Fraction = Field(0.99, description="Share of the target rate actually sent.")
    max_shed: Fraction = Field(0.0, description="Share of 429/503 answers allowed.")
    healthy_streams: bool = Field(True, description="Held streams keep their keep-alives.")
    promql: list[PromQLBound] = Field(default_factory=list)


class Noise(PlimsollModel):
    """The direct-call floor: a probe to the mock, bypassing the target, during each trial."""

    floor_quantile: Quantile = 0.99
    floor_bound: Seconds | None = Field(
        None, description="Above this the host stalled: the step is noisy and repeated."
    )
    probe_rate: float = Field(20.0, gt=0, le=1000, description="Probe calls per second.")
    retries: int = Field(3, ge=0, le=10)
    repeat_when_busy: bool = Field(
        True,
        description="A step that fails while the host is busy is noisy and repeated. Off: it "
        "fails, its reasons naming the contention (for smoke tests on shared machines that "
        "check the mechanics, not the figure).",
    )


class ExtraMetric(PlimsollModel):
    """A per-unit cost read per step, e.g. store calls per request or bytes per key."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    query: str = Field(min_length=1, description="PromQL; $namespace and $window are filled.")
    unit: str = ""
    per: str = Field(
        "none", pattern=r"^(none|request|user|second)$", description="Divide by the level."
    )


class Metrics(PlimsollModel):
    prometheus_url: str | None = Field(None, pattern=r"^https?://")
    scrape_interval: Seconds = 15.0
    settle: Seconds | None = Field(
        None, description="Wait for the last scrape (default twice the interval)."
    )
    extra: list[ExtraMetric] = Field(default_factory=list)


class Generators(PlimsollModel):
    replicas: int = Field(1, ge=1, le=256)
    processes: int | None = Field(None, ge=1, le=64, description="Per pod; default one a core.")
    resources: PodShape | None = None
    image: str | None = None
    max_cpu: Fraction = Field(0.85, description="Above this a generator is saturated: invalid.")
    max_dropped: Fraction = Field(0.01, description="Dropped starts above this: invalid.")


class Attribution(PlimsollModel):
    """Thresholds for naming what limited the target."""

    memory_margin: Fraction = Field(0.05, description="Within this of the limit is memory-bound.")
    cpu_busy: Fraction = Field(0.9, description="Mean use above this share of quota: CPU-bound.")
    throttled: Fraction = Field(0.2, description="CFS throttled periods above this: CPU-bound.")


class Variant(PlimsollModel):
    """One configuration of the target tested side by side with the others."""

    name: str = Field(pattern=NAME_PATTERN, max_length=30)
    description: str = ""
    env: dict[str, str] = Field(default_factory=dict, description="Merged into target.env.")
    args: list[str] | None = None
    image: str | None = None
    command: list[str] | None = None
    services: list[Service] | None = Field(None, description="Replaces spec.services.")


class Cleanup(StrEnum):
    ALWAYS = "Always"
    ON_SUCCESS = "OnSuccess"
    NEVER = "Never"


class CapacityTestSpec(PlimsollModel):
    target: Target
    services: list[Service] = Field(default_factory=list)
    upstream: Upstream = Field(default_factory=Upstream)
    workload: Workload
    trial: Trial = Field(default_factory=Trial)
    search: Search = Field(default_factory=Search)
    pass_when: PassWhen = Field(default_factory=PassWhen)
    noise: Noise = Field(default_factory=Noise)
    metrics: Metrics = Field(default_factory=Metrics)
    generators: Generators = Field(default_factory=Generators)
    attribution: Attribution = Field(default_factory=Attribution)
    variants: list[Variant] = Field(default_factory=list)
    cleanup: Cleanup = Cleanup.ALWAYS

    @model_validator(mode="after")
    def _cross_field(self) -> CapacityTestSpec:
        ops = {op.name for op in self.workload.mix}
        for bound in self.pass_when.latency:
            if bound.operation != "*" and bound.operation not in ops:
                raise ValueError(
                    f"passWhen.latency names operation {bound.operation!r}, "
                    f"which is not in workload.mix ({sorted(ops)})"
                )
        workload = self.workload
        needs_users = workload.users is None and workload.conversation is None
        if workload.model is LoadModel.USERS and needs_users:
            raise ValueError("workload model 'users' needs 'users' or 'conversation'")
        tools = {t.name for t in self.upstream.mcp.tools} if self.upstream.mcp else set()
        for op in self.workload.mix:
            if op.tool is not None and op.tool not in tools:
                raise ValueError(
                    f"workload.mix operation {op.name!r} calls tool {op.tool!r}, which "
                    f"upstream.mcp.tools does not list ({sorted(tools)})"
                )
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise ValueError("variant names must be unique")
        return self

    @property
    def unit(self) -> str:
        """What a level counts: 'users' or 'rps'."""
        return "users" if self.workload.model is LoadModel.USERS else "rps"
