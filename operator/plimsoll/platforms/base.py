"""What the runner needs from a platform: start the pieces, hand out URLs, measure, stop.

Two platforms implement it: `local` (processes and cgroups on this machine) and
`kubernetes` (a fresh namespace with pods). The runner never knows which one it
drives: it reaches the generators through the same HTTP control API on both,
and reads resources through the platform's `MetricsSource`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from plimsoll.api.autoscale import FlightLog
from plimsoll.api.faults import Fault
from plimsoll.api.host import HostDescription
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.metrics.source import MetricsSource


@dataclass(frozen=True)
class Endpoints:
    """Where the started pieces answer, as seen from the runner and from the generators."""

    target_url: str  # as the generators reach the target
    upstream_url: str  # as the generators reach the mock (the direct-call floor)
    generator_urls: list[str]  # control APIs, as the runner reaches them
    placement: list[str] = field(default_factory=list)  # human-readable: who runs where
    warnings: list[str] = field(default_factory=list)  # e.g. "cgroups not permitted: unpinned"
    control_token: str | None = None  # sent with every call to the generators' control API
    # The direct-call floor, served by the mock's floor process (`plimsoll_mock.floor`) so
    # the mock's own load does not slow it; None: the mock's /healthz stands in.
    floor_url: str | None = None
    # Networks the target's host may not resolve into when a trial connects (a cluster's
    # metadata, API server and loopback; `decide.target_policy.refused_networks`); locally [].
    refused_target_networks: list[str] = field(default_factory=list)
    # Every replica's URL when the target runs more than one (the first is target_url).
    replica_urls: list[str] = field(default_factory=list)
    # What fires `trial.faults` during a trial; None: this platform builds no faults.
    faults: FaultInjector | None = None
    # Whether every replica of the target runs within its shape's limits; None where the
    # platform pins by construction (a pod's requests == limits) or started no target.
    target_pinned: bool | None = None
    # A flight's target (issue 57): of `replica_urls`, how many serve at the start (the
    # rest are the autoscaler's room to grow), and the replicas it scales. None: fixed.
    serving_replicas: int | None = None
    replica_pool: ReplicaPool | None = None
    # A flight's autoscaler that is not Plimsoll's to run (a cluster's HPA controller),
    # watched beside the trial; None: the local simulation over `replica_pool`, or none.
    autoscaler: FlightAutoscaler | None = None
    # How many of this host's CPUs the generators, mocks and the floor share where the
    # target was given CPUs of its own (local); None: they share the target's, or run
    # elsewhere. What they felt is judged against these CPUs (`decide.contention`).
    equipment_cpus: int | None = None


class ReplicaPool(Protocol):
    """The target's replicas as an autoscaler grows and shrinks them during a flight
    (issue 57): the local platform's pinned processes."""

    def ready(self) -> int:
        """How many serve now."""
        ...

    def utilization(self) -> list[float]:
        """Each serving replica's CPU since the last call, as a share of its request."""
        ...

    async def add(self) -> None:
        """Start one more replica; returns once it serves (raises if it cannot)."""
        ...

    async def remove(self) -> None:
        """Stop the newest serving replica."""
        ...


class FlightAutoscaler(Protocol):
    """An autoscaler through a flight (issue 57): it runs (or is watched) beside the
    trial for its length, then says what it did."""

    async def run(self, seconds: float) -> None:
        """Scale, or watch the scaling, for `seconds` (cancelled if the trial ends early)."""
        ...

    def log(self) -> FlightLog:
        """What it did and read since `run` began."""
        ...


class FaultInjector(Protocol):
    async def fire(self, fault: Fault) -> list[str]:
        """Inject `fault` now; the pieces it took away (e.g. ['target-2'])."""
        ...


@dataclass(frozen=True)
class Restored:
    """What `Platform.replace_lost` did before a trial: the endpoints to use from now on
    (a recreated pod has a new address) and one line per piece it replaced."""

    endpoints: Endpoints
    replaced: list[str] = field(default_factory=list)


class PlatformError(RuntimeError):
    """A piece could not be started or stopped; the message says which and why."""


class StartedRun(Protocol):
    """A platform's run once its pieces are up: what the runner asks of it around each
    trial. It exists only after `Platform.start`, so none of its methods can be asked too
    early, and each reads what the start made without asking whether it ran."""

    endpoints: Endpoints  # as started; the runner keeps the latest (`run.equipment`)

    async def ensure_ready(self) -> None:
        """Called before every trial: wait while the target restarts (after an OOM kill or a
        crash); raise `PlatformError` naming the target's last words when it cannot run."""
        ...

    async def lost_equipment(self) -> dict[str, str]:
        """Which generators or mocks are gone now (piece -> why), replacing nothing: asked
        after each trial, since a trial a piece died in cannot be trusted."""
        ...

    async def replace_lost(self, endpoints: Endpoints) -> Restored:
        """Called before every trial: start again any generator or mock that died, was
        evicted or deleted, wait until it answers, and return `endpoints` with its new
        address. Bounded (`plimsoll.platforms.replacements`): `PlatformError` once a
        variant has used up its replacements."""
        ...

    def metrics(self) -> MetricsSource:
        """The source the runner asks for each trial window's resource usage."""
        ...


class Platform(Protocol):
    name: str  # "local" or "kubernetes", recorded in the report

    async def start(
        self, spec: CapacityTestSpec, every_variant: Sequence[CapacityTestSpec]
    ) -> StartedRun:
        """Start services, the mock, the target (pinned) and the generators; wait until ready;
        run the target's setup steps. Idempotent: pieces already running are adopted.
        `spec` is this variant's spec and `every_variant` every variant's, this one among
        them, as the runner derived them once (`CapacityTestSpec.variant_specs`): a platform
        reads every piece from `spec`, and only what spans the whole run (the Kubernetes
        namespace's quota) from `every_variant`."""
        ...

    async def stop(self, *, keep: bool) -> None:
        """Stop and remove everything started, even by a start that failed half-way
        (`keep=True` leaves it for inspection)."""
        ...


@runtime_checkable
class MetricsBeforeStart(Protocol):
    """A platform that can name its metrics source before anything is provisioned, so the
    runner fits the trial lengths to the scrape interval first (`run.scrape_check`)."""

    def metrics_before_start(self, spec: CapacityTestSpec) -> MetricsSource | None:
        """A source that can tell the scrape interval now (None: no Prometheus)."""
        ...


@runtime_checkable
class ScalesGenerators(Protocol):
    """A started run that can add generators (`generators.replicas: auto`): the local
    platform's (processes) and Kubernetes' (pods). `generators_sized_by_default` says
    whether an unset `replicas` means auto there."""

    generators_sized_by_default: bool

    async def scale_generators(self, endpoints: Endpoints, count: int) -> Endpoints:
        """Start generators until `count` answer; `endpoints` with all their URLs."""
        ...


@dataclass(frozen=True)
class TargetRoom:
    """The most one target replica may be given here: CPU cores and memory bytes (None:
    not known, so not bounded)."""

    cpu: float | None
    memory: int | None


@runtime_checkable
class KnowsTargetRoom(Protocol):
    """A platform that can tell, before starting anything, how large a target it can pin:
    the local one (its CPUs beside the equipment's, its free memory). The confirmation
    experiment (`plimsoll.run.confirm`) asks it before doubling a resource."""

    def target_room(self, spec: CapacityTestSpec) -> TargetRoom:
        """The room for each of `spec`'s target replicas."""
        ...


@runtime_checkable
class KnowsRunBudget(Protocol):
    """A platform whose admin bounds what one run may request: the Kubernetes one (the
    chart's `limits`). The confirmation experiment asks it before a trial at a doubled
    shape, which the run's spec, checked when the run was admitted, did not ask for."""

    def budget_problem(self, every_variant: Sequence[CapacityTestSpec]) -> str | None:
        """Why a run of `every_variant` would request more than the admin allows, or None."""
        ...


@runtime_checkable
class DescribesHost(Protocol):
    """A platform that can see the machine it measures on (the local one); the
    Kubernetes operator reads no Nodes, so its reports say the host was not described."""

    def describe_host(self) -> HostDescription: ...
