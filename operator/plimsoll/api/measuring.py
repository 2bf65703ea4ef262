"""How steps are measured and read: the direct-call floor and the noise rules (`noise`),
Prometheus and the user's own per-unit figures (`metrics`), and how the limit is named
(`attribution`)."""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import (
    URL_PATTERN,
    PromQLQuery,
)
from plimsoll.api.units import Fraction, Quantile, Seconds


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
