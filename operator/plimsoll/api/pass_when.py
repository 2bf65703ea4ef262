"""The bar a step must clear (`passWhen`): latency quantiles per operation, error shares
by class, goodput, and the user's own PromQL."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import (
    PromQLQuery,
)
from plimsoll.api.units import Fraction, Quantile, Seconds


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
