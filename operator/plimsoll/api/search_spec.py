"""How a run chooses its levels (`search`) and times each trial (`trial`): the fields a
user sets, with the rules they must keep, checked before anything runs."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import (
    HourSeconds,
    Level,
    TrialSeconds,
)
from plimsoll.api.faults import Fault
from plimsoll.api.timeline import DEFAULT_SLICE_SECONDS
from plimsoll.api.units import Fraction, Seconds


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
    AUTOSCALE = "autoscale"  # one flight of workload.profile at the target under its autoscaler


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
        "probe (short trials, then full ones), prove (one long trial at a planned level), "
        "autoscale (one flight of workload.profile at the target under target.autoscaler).",
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
                "'level' and 'fromSizing' are for strategy 'prove' (a flight's level is its "
                "profile's peak): set strategy: prove or leave them out"
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
