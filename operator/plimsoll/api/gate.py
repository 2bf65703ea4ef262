"""Capacity as a regression gate: what the spec asks (baseline, threshold, schedule) and
what the status remembers (earlier runs' ceilings, the regression verdict).

A team runs a capacity test to answer "did this release lower what one pod holds?".
`spec.regression` names the baseline a new ceiling is held against, `spec.schedule`
re-runs the test on a cron schedule, and `status.history` keeps the last runs per
variant so the operator can judge each new run against them.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.step import LimitedBy
from plimsoll.api.units import Fraction

BASELINE_PATTERN = r"^(previous|best|[0-9]+)$"


class Regression(PlimsollModel):
    """When a new ceiling counts as a regression."""

    baseline: str = Field(
        "previous",
        pattern=BASELINE_PATTERN,
        description=(
            "'previous' (the last complete run), 'best' (the highest complete run in the "
            "history) or a fixed level, e.g. '120'."
        ),
    )
    threshold: Fraction = Field(
        0.10, description="A drop larger than this share of the baseline can be a regression."
    )


class Schedule(PlimsollModel):
    """Re-run the test on a cron schedule; runs missed while the operator was down run once."""

    cron: str = Field(description="Five cron fields, e.g. '0 3 * * *' for 03:00 every day.")
    time_zone: str = Field("UTC", description="An IANA time zone, e.g. 'Europe/Berlin'.")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        from croniter import croniter  # only the operator and the CLI validate schedules

        if len(value.split()) != 5 or not croniter.is_valid(value):
            raise ValueError(
                f"{value!r} is not a five-field cron expression (minute hour day month "
                "weekday), e.g. '0 3 * * *' for 03:00 every day"
            )
        return value

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"{value!r} is not an IANA time zone name (e.g. 'UTC', 'Europe/Berlin')"
            ) from None
        return value


class HistoryEntry(PlimsollModel):
    """One finished run of one variant, as the gate remembers it."""

    run_id: str
    variant: str = "default"
    finished_at: datetime
    level: int | None = Field(None, description="The ceiling; None if no level passed.")
    low: int | None = None
    high: int | None = None
    spread: list[int] = Field(default_factory=list)
    limited_by: LimitedBy = LimitedBy.UNKNOWN
    complete: bool = True
    image: str | None = Field(None, description="The target's image (and digest when known).")
    generation: int | None = None


class RegressionStatus(PlimsollModel):
    """The gate's verdict on the latest run, per variant (the baseline's, first)."""

    variant: str = "default"
    regressed: bool = False
    baseline: int | None = Field(None, description="The baseline ceiling; None if none yet.")
    current: int | None = None
    change: float | None = Field(None, description="(current - baseline) / baseline.")
    message: str = ""
