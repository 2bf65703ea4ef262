"""A flight's one trial, planned from its profile (issue 57): the trial's level is the
profile's peak (the generators pace each moment at its share of it) and its length the
profile's, measured from its first second (no warm-up: the base phase is part of the
flight). Called by the runner once per variant, beside `proof_plan`; the search then
runs that one trial as it runs a proof (`decide.search.prove`)."""

from __future__ import annotations

from plimsoll.api.spec import CapacityTestSpec, Strategy
from plimsoll.shared.rate_profile import of_phases


def planned_flight(spec: CapacityTestSpec) -> CapacityTestSpec:
    """`spec` with its search's level and its trial's length the profile's; `spec` itself
    when it is no flight."""
    profile = spec.workload.profile
    if spec.search.strategy is not Strategy.AUTOSCALE or profile is None:
        return spec
    peak = max(phase.level for phase in profile)
    search = spec.search.model_copy(update={"level": peak})
    trial = spec.trial.model_copy(update={"duration": of_phases(profile).seconds, "warm_up": 0.0})
    return spec.model_copy(update={"search": search, "trial": trial})
