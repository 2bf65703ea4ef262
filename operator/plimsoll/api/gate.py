"""Capacity as a regression gate: what the spec asks (baseline, threshold, schedule) and
what the status remembers (earlier runs' ceilings, the regression verdict).

A team runs a capacity test to answer "did this release lower what one pod holds?".
`spec.regression` names the baseline a new ceiling is held against, `spec.schedule`
re-runs the test on a cron schedule, and `status.history` keeps the last runs per
variant so the operator can judge each new run against them.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.step import LimitedBy
from plimsoll.api.units import Fraction

_CRON_PROBE_START = datetime(2024, 1, 1)
# A fixed baseline is a level: 1 or more (0 would make every change a division by zero).
BASELINE_PATTERN = r"^(previous|best|[1-9][0-9]{0,8})$"
# A schedule runs whole capacity tests: more often than this floods the cluster (and the
# status history) for no new answer.
MIN_CRON_INTERVAL = 300.0  # seconds
_CRON_GAPS_CHECKED = 1500  # more firings than a day has minutes: any cron's shortest gap


class RegressionMethod(StrEnum):
    THRESHOLD = "threshold"  # against one baseline run or level, by a share and outside noise
    CHANGEPOINT = "changepoint"  # e-divisive means over the history (plimsoll.decide.changepoint)


class Regression(PlimsollModel):
    """When a new ceiling counts as a regression."""

    method: RegressionMethod = Field(
        RegressionMethod.THRESHOLD,
        description=(
            "'threshold': the new ceiling against the baseline, by more than the threshold "
            "and outside noise. 'changepoint': e-divisive means with a permutation test over "
            "the variant's history (status.history); Regressed when the latest run brings a "
            "new significant downward change. baseline and threshold apply to 'threshold' only."
        ),
    )
    significance: float = Field(
        0.01,
        gt=0,
        lt=1,
        description="changepoint: the largest permutation-test p-value a change may have to "
        "count (the share of shuffled histories that split as strongly).",
    )
    permutations: int = Field(
        200,
        ge=20,
        le=1000,
        description="changepoint: shuffled histories per candidate change (the p-value's "
        "resolution is 1 / (permutations + 1)).",
    )
    baseline: str = Field(
        "previous",
        pattern=BASELINE_PATTERN,
        description=(
            "'previous' (the last complete run), 'best' (the highest complete run in the "
            "history) or a fixed level of 1 or more, e.g. '120'."
        ),
    )
    threshold: Fraction = Field(
        0.10, description="A drop larger than this share of the baseline can be a regression."
    )


def _shortest_gap(cron: str) -> float:
    """The shortest time between two firings, in seconds: the minute and hour fields
    repeat every firing day, so a year of firings (at most more than a day has minutes)
    holds the shortest gap, across midnight too; from a fixed date, so the answer is pure."""
    from croniter import CroniterBadDateError, croniter

    runs = croniter(cron, _CRON_PROBE_START, max_years_between_matches=8)
    shortest = float("inf")
    first = previous = runs.get_next(datetime)
    for _ in range(_CRON_GAPS_CHECKED):
        try:
            current = runs.get_next(datetime)
        except CroniterBadDateError:
            break
        shortest = min(shortest, (current - previous).total_seconds())
        # Short gaps sit within a day or across two consecutive firing days, both of
        # which a year holds (29 February aside, which a daily gap cannot shorten).
        if shortest < MIN_CRON_INTERVAL or (current - first).days > 366:
            break
        previous = current
    return shortest


class Schedule(PlimsollModel):
    """Re-run the test on a cron schedule; runs missed while the operator was down run once."""

    cron: str = Field(description="Five cron fields, e.g. '0 3 * * *' for 03:00 every day.")
    time_zone: str = Field("UTC", description="An IANA time zone, e.g. 'Europe/Berlin'.")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        # only the operator and the CLI validate schedules
        from croniter import CroniterBadDateError, croniter

        if len(value.split()) != 5 or not croniter.is_valid(value):
            raise ValueError(
                f"{value!r} is not a five-field cron expression (minute hour day month "
                "weekday), e.g. '0 3 * * *' for 03:00 every day"
            )
        # croniter accepts a date that never comes (30 February) and then fails in the
        # operator's get_prev after the first run: look for one firing within 8 years (a
        # 29 February comes at least every 8), from a fixed date so the answer is pure.
        try:
            croniter(value, _CRON_PROBE_START, max_years_between_matches=8).get_next(datetime)
        except CroniterBadDateError:
            raise ValueError(
                f"{value!r} never fires: no date matches its day and month (e.g. 30 February "
                "or 31 April); pick a day that exists in that month"
            ) from None
        gap = _shortest_gap(value)
        if gap < MIN_CRON_INTERVAL:
            raise ValueError(
                f"{value!r} fires {gap / 60:.0f} minute(s) apart: at most every "
                f"{MIN_CRON_INTERVAL / 60:.0f} minutes (e.g. '*/5 * * * *'); each firing is "
                "a whole capacity test"
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

    run_id: str = Field(description="The run this entry records (the run namespace's suffix).")
    variant: str = Field("default", description="The variant whose ceiling this is.")
    finished_at: datetime = Field(description="When the run ended.")
    level: int | None = Field(None, description="The ceiling; None if no level passed.")
    low: int | None = Field(
        None, description="The lowest credible level of the ceiling's noise band."
    )
    high: int | None = Field(
        None,
        description="The highest credible level of the noise band; unset when nothing above the "
        "ceiling failed.",
    )
    spread: list[int] = Field(
        default_factory=list, description="The levels the repeats of the best level passed at."
    )
    limited_by: LimitedBy = Field(
        LimitedBy.UNKNOWN,
        description="What limited the target at the ceiling: memory, cpu, neither (latency-bound) "
        "or unknown.",
    )
    complete: bool = Field(True, description="False when the run stopped early with a range only.")
    image: str | None = Field(None, description="The target's image (and digest when known).")
    generation: int | None = Field(
        None, description="The CapacityTest's metadata.generation the run measured."
    )
    cpu_per_unit: float | None = Field(
        None,
        description="The target's CPU per unit of load: the slope of its CPU over the passing "
        "levels, in cores per request/s (CPU-seconds a request) or per user; None when not "
        "measured.",
    )
    memory_per_unit: float | None = Field(
        None,
        description="The target's peak memory per unit of load: the slope over the passing "
        "levels, in bytes; None when not measured.",
    )


class Changepoint(PlimsollModel):
    """Where one variant's history moved: the run that starts a significant change."""

    variant: str = Field("default", description="The variant whose history changed.")
    metric: str = Field(
        "ceiling", description="The measure that changed: ceiling, CPU per unit or memory per unit."
    )
    run_id: str = Field(description="The first run after the change.")
    index: int = Field(description="Its place in the variant's kept history, 0 the oldest.")
    runs: int = Field(description="How many complete runs the history held.")
    image: str | None = Field(None, description="The image that run measured, when known.")
    generation: int | None = Field(None, description="The CapacityTest generation it measured.")
    before: float = Field(description="The mean of the runs since the previous change.")
    after: float = Field(description="The mean of the runs up to the next change.")
    change: float = Field(description="after / before - 1.")
    margin: float | None = Field(
        None,
        description="The 95% interval's half-width of the change (Welch's t); None when "
        "neither side has two runs.",
    )
    pvalue: float = Field(description="The permutation test's p-value.")
    sentence: str = Field("", description="e.g. 'ceiling −12% ± 3% at run 1a2b, image api:2.7'.")


class RegressionStatus(PlimsollModel):
    """The gate's verdict on the latest run, per variant (the baseline's, first)."""

    variant: str = Field("default", description="The variant this verdict is about.")
    regressed: bool = Field(
        False,
        description="True when the latest ceiling fell below the baseline by more than the "
        "threshold and outside noise (threshold), or the latest run brought a new significant "
        "downward change (changepoint).",
    )
    baseline: int | None = Field(
        None,
        description="The baseline ceiling; None if none yet. changepoint: the mean before the "
        "latest change, or of the earlier runs when nothing changed.",
    )
    current: int | None = Field(None, description="The latest run's ceiling.")
    change: float | None = Field(None, description="(current - baseline) / baseline.")
    message: str = Field("", description="The verdict in a sentence, with the change in percent.")
    method: RegressionMethod = Field(
        RegressionMethod.THRESHOLD, description="The regression.method that judged."
    )
    changepoints: list[Changepoint] = Field(
        default_factory=list,
        description="changepoint: every significant change in the variant's history, oldest first.",
    )
