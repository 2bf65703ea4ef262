"""The cluster admin's limits on one run, and the problems of a spec past them.

Who: the operator's supervisor, before it creates anything (a spec past a limit ends
in `SpecValid=False`), with the limits the chart's `limits` values set
(`PLIMSOLL_LIMITS`, read by `plimsoll.cli.operator`).

Why: the run's ResourceQuota (`run_budget`) is computed from the tenant's own spec, so
it bounds nothing the tenant did not ask for: one valid CR asked for 338 pods,
235,579 cores and 1.4 PiB, and 16 variants of 500 trials of 6 hours each. Here each
is held to a ceiling the admin chose, with safe defaults, and the problem names the
limit (by its name in the chart's values) and its value. Pure: the budget is computed
by the caller with the operator's own pod shapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.units import (
    format_cpu,
    format_duration,
    format_memory,
    parse_cpu,
    parse_duration,
    parse_memory,
)
from plimsoll.decide.run_budget import RunBudget


@dataclass(frozen=True)
class RunLimits:
    """Per run, unless said otherwise. The names are the chart's (`limits.<name>`)."""

    pods: int = 40
    cpu: float = 32.0  # cores requested, the run's quota
    memory: int = 64 * 2**30  # bytes requested
    generators: int = 16  # in one variant, at maxReplicas with replicas: auto
    trials: int = 400  # in all: every variant's search.maxTrials
    duration: float = 12 * 3600.0  # seconds: every trial at maxTrials, warm-up and settle
    deadline: float = 24 * 3600.0  # seconds of wall time from the run's start, all included
    runs_per_namespace: int = 4  # CapacityTests of one namespace running at once (0: any)

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> RunLimits:
        """From the chart's `limits` (quantities and durations as Kubernetes writes
        them); a name it does not know, or a bad value, raises ValueError naming it."""
        known = {f.name: f for f in fields(cls)}
        camel = {_camel(name): name for name in known}
        parsed: dict[str, object] = {}
        for key, value in values.items():
            name = camel.get(key)
            if name is None:
                raise ValueError(f"limits.{key}: not a limit; known: {', '.join(sorted(camel))}")
            try:
                if name == "cpu":
                    parsed[name] = parse_cpu(value)
                elif name == "memory":
                    parsed[name] = parse_memory(value)
                elif name in ("duration", "deadline"):
                    parsed[name] = parse_duration(value)
                elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"{value!r} is not a count (0 or more)")
                else:
                    parsed[name] = value
            except ValueError as exc:
                raise ValueError(f"limits.{key}: {exc}") from None
        return cls(**parsed)  # type: ignore[arg-type]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _over(limit: str, needs: str, value: str) -> str:
    return (
        f"spec: the run needs {needs}, over the operator's limit limits.{limit} = {value} "
        "(set by the cluster admin in the chart's values): ask for less, or ask the admin"
    )


def run_trials(every_variant: Sequence[CapacityTestSpec]) -> int:
    return sum(view.search.max_trials for view in every_variant)


def run_duration(every_variant: Sequence[CapacityTestSpec]) -> float:
    """The longest the trials can take: each variant's maxTrials of warm-up, trial and
    settle (setup, provisioning and probes come on top)."""
    return sum(
        view.search.max_trials * (view.trial.warm_up + view.trial.duration + view.trial.settle)
        for view in every_variant
    )


def deadline_message(limits: RunLimits) -> str:
    return (
        f"the run passed its deadline: {format_duration(limits.deadline)} since it started "
        f"(limits.deadline, set by the cluster admin); the steps measured so far are kept"
    )


def budget_problems(budget: RunBudget, limits: RunLimits) -> list[str]:
    """The pods, CPU and memory the run would request past the admin's limits. Also asked
    before the confirmation experiment's trial at a doubled shape (the Kubernetes
    platform), so that trial never asks for more than the admin allows a run."""
    problems = []
    if budget.pods > limits.pods:
        problems.append(_over("pods", f"{budget.pods} pods", str(limits.pods)))
    if budget.cpu > limits.cpu:
        cpu = format_cpu(budget.cpu)
        problems.append(_over("cpu", f"{cpu} CPU requested", format_cpu(limits.cpu)))
    if budget.memory > limits.memory:
        memory = format_memory(budget.memory)
        problems.append(_over("memory", f"{memory} requested", format_memory(limits.memory)))
    return problems


def limit_problems(
    every_variant: Sequence[CapacityTestSpec], budget: RunBudget, limits: RunLimits
) -> list[str]:
    """Each limit the run goes past, naming the limit and its value."""
    problems = budget_problems(budget, limits)
    generators = max(
        view.generators.max_replicas
        if view.generators.asked_auto()
        else view.generators.fixed_replicas
        for view in every_variant
    )
    if generators > limits.generators:
        needs = f"{generators} generators in a variant"
        problems.append(_over("generators", needs, str(limits.generators)))
    trials = run_trials(every_variant)
    if trials > limits.trials:
        needs = f"up to {trials} trials (every variant's search.maxTrials)"
        problems.append(_over("trials", needs, str(limits.trials)))
    duration = run_duration(every_variant)
    if duration > limits.duration:
        needs = f"up to {format_duration(duration)} of trials"
        problems.append(_over("duration", needs, format_duration(limits.duration)))
    return problems
