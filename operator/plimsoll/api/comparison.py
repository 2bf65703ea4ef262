"""The comparison of ceilings: variants of one run, or runs of the same test over time.

Built by `plimsoll.decide.comparison` (pure), carried in report.json
(`RunReport.comparison`) and printed by `plimsoll compare --json`, so CI tools
read the same figures report.md shows.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.step import LimitedBy


class Difference(StrEnum):
    """How a ceiling stands against the baseline's, noise taken into account."""

    BASELINE = "baseline"  # this is the baseline
    HIGHER = "higher"  # higher, and the two bands do not touch
    LOWER = "lower"  # lower, and the two bands do not touch
    WITHIN_NOISE = "within noise"  # the bands touch or overlap
    UNKNOWN = "unknown"  # a side passed no level and failed none: nothing to compare


class Band(PlimsollModel):
    """Where a ceiling may truly lie, from the range and the repeats: `low` … `high`
    (`high` None: no level above it failed, the ceiling may be higher)."""

    low: int
    high: int | None = None


class Figures(PlimsollModel):
    """What one variant measured at one level (means over its passing full-length trials)."""

    level: int
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    cpu_cores: float | None = None
    memory_bytes: float | None = None


class CostDelta(PlimsollModel):
    """A per-unit cost (CPU per request, memory per user) and its change against the baseline."""

    name: str
    value: float
    unit: str
    baseline_value: float | None = None
    delta_percent: float | None = None


class FeatureCost(PlimsollModel):
    """What one unit of a variant's `value` costs: (cost - baseline's) / (value - baseline's),
    e.g. CPU per request per sensor."""

    name: str = Field(description="e.g. 'CPU per request per sensor'.")
    value: float
    unit: str


class ComparedVariant(PlimsollModel):
    name: str = Field(description="The variant's name, or 'run label:variant' across runs.")
    source: str = Field("", description="Where it came from (a report path), across runs.")
    value: float | None = None
    value_unit: str = ""
    ceiling: int | None = None
    low: int | None = None
    high: int | None = None
    spread: list[int] = Field(default_factory=list)
    limited_by: LimitedBy = LimitedBy.UNKNOWN
    complete: bool = False
    band: Band | None = None
    delta_percent: float | None = Field(None, description="Ceiling against the baseline's.")
    difference: Difference = Difference.UNKNOWN
    at_common_level: Figures | None = None
    costs: list[CostDelta] = Field(default_factory=list)
    feature_costs: list[FeatureCost] = Field(default_factory=list)


class Comparison(PlimsollModel):
    unit: str
    baseline: str
    common_level: int | None = Field(
        None, description="The highest level every variant passed; figures are compared there."
    )
    variants: list[ComparedVariant]
    headline: str = ""
    rule: str = Field("", description="How 'within noise' was decided, in words.")
