"""What a step measured that the verdict judges: the generators' merged result, the
target's and the equipment's resources, the user's PromQL values and the host's
contention. Built by the runner after each trial (`plimsoll.run.step`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from plimsoll.api.step import Contention, ResourceUsage
from plimsoll.api.trial import TrialResult
from plimsoll.api.workload import LoadModel


@dataclass(frozen=True)
class StepInput:
    """Everything a step measured that the bar judges."""

    client: TrialResult | None  # the merged generators' result; None: one returned nothing
    level: int
    model: LoadModel = LoadModel.RATE
    target: ResourceUsage | None = None  # None: no server side (an external URL)
    others: Mapping[str, ResourceUsage] = field(default_factory=dict)
    promql: Mapping[str, float | None] = field(default_factory=dict)
    contention: Contention | None = None  # None: not measured (no verdict on the host)
