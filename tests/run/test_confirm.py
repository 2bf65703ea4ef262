"""The confirmation experiment's run, where it must not run or cannot start: off, a proof,
an unpinned target, a doubled shape that does not fit, a platform that fails to start.
Each leaves the limit inferred with its reason and the search's ceiling otherwise as it
was. The experiment that runs, on real processes, is tests/run/test_confirm_local.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from plimsoll.api.confirmation import Counterfactual, Finding
from plimsoll.api.report import RunReport
from plimsoll.api.spec import CapacityTestSpec, Strategy, Variant
from plimsoll.api.status import Ceiling, Headroom
from plimsoll.api.step import LimitedBy
from plimsoll.api.target import PodShape
from plimsoll.decide.confirmation import finding, not_run
from plimsoll.decide.run_budget import run_budget
from plimsoll.decide.run_limits import RunLimits
from plimsoll.kube.manifests import KNOWN_SHAPES
from plimsoll.kube.names import RunIdentity
from plimsoll.platforms.base import Endpoints, PlatformError, TargetRoom
from plimsoll.platforms.kubernetes.options import KubernetesOptions
from plimsoll.platforms.kubernetes.platform import KubernetesPlatform
from plimsoll.run.confirm import confirm_limit, counterfactual_name, with_confirmation
from tests.localrun import RecordingSink, short_cpu_test

GIB = 2**30


class _Refusing:
    """A platform double with `room` for the target whose `start` fails, counting calls."""

    name = "double"

    def __init__(self, room: TargetRoom, log: list[str]) -> None:
        self.room, self.log = room, log

    def target_room(self, spec: CapacityTestSpec) -> TargetRoom:
        return self.room

    async def start(
        self, spec: CapacityTestSpec, every_variant: Sequence[CapacityTestSpec]
    ) -> Endpoints:
        self.log.append(f"start {spec.target.resources}")
        raise PlatformError("target pod unschedulable: 0/1 nodes have 1 CPU free")

    async def stop(self, *, keep: bool) -> None:
        self.log.append(f"stop keep={keep}")


def _ceiling(limited_by: LimitedBy = LimitedBy.CPU) -> Ceiling:
    return Ceiling(
        level=24,
        unit="rps",
        low=24,
        high=28,
        complete=True,
        limited_by=limited_by,
        headroom=Headroom(reason="throttled in 40% of periods"),
    )


def _report(spec: CapacityTestSpec) -> RunReport:
    return RunReport(
        test_name="t", spec=spec, started_at=datetime.now(UTC), platform="local", pinned=True
    )


async def _confirm(
    spec: CapacityTestSpec, ceiling: Ceiling, room: TargetRoom, log: list[str]
) -> Ceiling:
    made: list[str] = []

    def make(variant: Variant) -> _Refusing:
        made.append(variant.name)
        return _Refusing(room, log)

    confirmed = await confirm_limit(
        spec, "default", ceiling, [spec], make, RecordingSink(), _report(spec)
    )
    log.extend(f"made {name}" for name in made)
    return confirmed


def _spec(**attribution: object) -> CapacityTestSpec:
    spec = short_cpu_test(confirm=True).spec
    return spec.model_copy(update={"attribution": spec.attribution.model_copy(update=attribution)})


async def test_off_it_runs_nothing_and_says_so() -> None:
    log: list[str] = []
    ceiling = await _confirm(_spec(confirm=False), _ceiling(), TargetRoom(8, 8 * GIB), log)
    assert ceiling.confirmation is not None
    assert ceiling.confirmation.finding is Finding.INFERRED
    assert ceiling.confirmation.reason == "attribution.confirm is off"
    assert ceiling.limited_by is LimitedBy.CPU
    assert log == []


async def test_a_doubled_shape_that_does_not_fit_is_refused_before_anything_starts() -> None:
    log: list[str] = []
    spec = _spec()
    assert spec.target.resources is not None
    cpu = spec.target.resources.cpu
    room = TargetRoom(cpu * 1.5, 8 * GIB)  # memory doubled fits; CPU doubled does not
    ceiling = await _confirm(spec, _ceiling(), room, log)
    assert ceiling.confirmation is not None
    assert ceiling.confirmation.finding is Finding.INFERRED
    assert ceiling.confirmation.reason == (
        f"not run: {cpu * 2:g} CPU (the cpu doubled) does not fit: "
        f"{cpu * 1.5:g} CPU is free for the target"
    )
    assert not [line for line in log if line.startswith("start")]  # nothing was started
    assert ceiling.confirmation.trials == []


async def test_a_platform_that_cannot_start_is_stopped_and_the_limit_stays_inferred() -> None:
    log: list[str] = []
    ceiling = await _confirm(_spec(), _ceiling(), TargetRoom(None, None), log)
    assert ceiling.confirmation is not None
    assert ceiling.confirmation.finding is Finding.INFERRED
    assert ceiling.confirmation.reason.startswith("the cpu doubled could not start: target pod")
    starts = [line for line in log if line.startswith("start")]
    assert len(starts) == 1  # the named resource first; the second trial is not tried
    assert "stop keep=False" in log  # what started half-way is stopped
    assert "made default-2x-cpu" in log
    assert "made default-2x-memory" in log


@pytest.mark.parametrize(
    ("why", "change"),
    [
        ("a proof judges one level", {"search": {"strategy": Strategy.PROVE, "level": 10}}),
        ("every level passed", {"every_level_passed": True}),
    ],
)
async def test_nothing_to_confirm_runs_nothing(why: str, change: dict[str, object]) -> None:
    spec = _spec()
    ceiling = _ceiling()
    if "search" in change:
        search = spec.search.model_copy(update=change["search"])  # type: ignore[arg-type]
        spec = spec.model_copy(update={"search": search})
    else:
        ceiling = ceiling.model_copy(update=change)
    log: list[str] = []
    confirmed = await _confirm(spec, ceiling, TargetRoom(8, 8 * GIB), log)
    assert confirmed.confirmation is not None
    assert why in confirmed.confirmation.reason
    assert log == []


def test_a_contradicted_limit_names_what_the_experiment_found_without_the_rules_reason() -> None:
    shape = PodShape(cpu=0.5, memory=GIB)
    ceiling = _ceiling(LimitedBy.NEITHER)
    trials = [
        Counterfactual(doubled=LimitedBy.CPU, level=28, shape=shape, verdict="pass"),
        Counterfactual(doubled=LimitedBy.MEMORY, level=28, shape=shape, verdict="fail"),
    ]
    contradicted = with_confirmation(ceiling, finding(ceiling, trials))
    assert contradicted.limited_by is LimitedBy.CPU
    assert contradicted.headroom.reason == ""
    assert contradicted.confirmation is not None
    assert contradicted.confirmation.named is LimitedBy.NEITHER
    inferred = with_confirmation(ceiling, not_run(ceiling, "off"))
    assert inferred.limited_by is LimitedBy.NEITHER
    assert inferred.headroom.reason == "throttled in 40% of periods"


def test_each_trial_runs_under_a_name_of_its_own() -> None:
    shape = PodShape(cpu=1, memory=GIB)
    trial = Counterfactual(doubled=LimitedBy.MEMORY, level=5, shape=shape)
    assert counterfactual_name("sensors-0", trial) == "sensors-0-2x-memory"


async def test_on_kubernetes_a_trial_past_the_admins_limits_is_refused_naming_the_limit() -> None:
    """The run's spec was held to the chart's `limits` when it was admitted; the doubled
    target was not in it. The real platform class answers, before it makes anything."""
    spec = _spec()
    assert spec.target.resources is not None
    # Room for the run as written (its quota: target, mock, generator, headroom), not
    # for it beside the target at twice the CPU.
    own = run_budget([spec], KNOWN_SHAPES).cpu
    limits = RunLimits(cpu=own + spec.target.resources.cpu / 2)
    run = RunIdentity(
        namespace="plimsoll-r1", run_id="r1", owner_uid="u", owner_name="t", owner_namespace="team"
    )
    started: list[str] = []

    class _Platform(KubernetesPlatform):
        async def start(
            self, spec: CapacityTestSpec, every_variant: Sequence[CapacityTestSpec]
        ) -> Endpoints:
            started.append(self.run.variant)
            raise AssertionError("a refused trial must start nothing")

    def make(variant: Variant) -> KubernetesPlatform:
        options = KubernetesOptions(limits=limits)
        return _Platform(None, replace(run, variant=variant.name), options)  # type: ignore[arg-type]

    assert make(Variant(name="default")).budget_problem([spec]) is None  # the run as admitted
    ceiling = await confirm_limit(
        spec, "default", _ceiling(), [spec], make, RecordingSink(), _report(spec)
    )
    assert ceiling.confirmation is not None
    assert ceiling.confirmation.finding is Finding.INFERRED
    reason = ceiling.confirmation.reason
    assert reason.startswith("not run: spec: the run needs ")
    assert "over the operator's limit limits.cpu" in reason
    assert started == []
