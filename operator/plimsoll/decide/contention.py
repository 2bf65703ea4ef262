"""Was the host busy during a step? A pure decision over figures measured beside the trial.

The runner (`plimsoll.run.step`) reads the figures and the verdict
(`plimsoll.decide.verdict`) acts on the answer: a step that fails while the
host was busy is noisy and repeated, never a fail, because a busy host makes a
target look smaller than it is. Nothing here needs configuring; each signal is
one the host cannot produce while it is quiet:

- the target waited for a CPU outside its own throttling (another process held
  the CPU its quota allowed it) for more than `TARGET_WAIT` of its runnable time,
  in a step where it was throttled in fewer than `THROTTLED_MOST` of its CFS
  periods: a target throttled in most periods got its whole quota, so whatever
  it waited did not make it smaller (and the wait of its other threads during
  throttling cannot be told from the host's). And only where another program
  could have held the CPU: where the host's total CPU is read (the local
  platform), other programs (the host's busy CPU less the target, its services,
  generators and mocks) must have used `FOREIGN_BUSY` cores or more. Below that,
  the wait is the test's own, and the step says whose instead of calling the host
  busy (`Contention.not_the_host`): Plimsoll's equipment, where the target, the
  generators and the mocks used `EQUIPMENT_FULL` of the host's CPUs between them
  (repeating the step would meet the same equipment), else the target's own
  threads, more of them runnable than the CPUs it may use. The same holds for the
  signals below, felt by the generators and the floor: where no other program was busy
  they are the test's own when the pieces filled the host, or when the target has CPUs
  of its own and the generators and mocks used `EQUIPMENT_SHARE_BUSY` of the rest;
- the generators' threads waited for a CPU more than `GENERATOR_WAIT_MS` on
  average each time they woke (they read answers that much late; a share of
  their runnable time would not do: a mostly idle process runs for microseconds
  per wake-up, so any wait is a large share of it);
- the generators' starts left late: their p99 start lag exceeded `START_LAG_MS`
  (a quiet host's timers: p99 about 2 ms, at most about 6 ms);
- the direct-call floor (a call to the mock that bypasses the target) exceeded
  its bound: `noise.floorBound` when given, else one derived from the floor the
  first steps measured (`floor_bound`).

Figures that could not be read are listed, never taken as quiet evidence.

The host's steal (the share of a virtual machine's CPU time its hypervisor took,
read by the generators from /proc/stat) is reported beside these, but is not a
signal yet: on this project's 2-core VM it was 0-6% in the calibration round
trip's steps (5-second peaks of 23% in another run of it), and 3-46% in a CI run
whose other signals already called those steps busy: too little is measured to set
a bound that would not make the heavier steps of every test noisy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from plimsoll.api.step import BusySignal, Contention, StepRecord, TrialKind

# A quiet host makes a runnable thread wait a few percent of the time at most, and
# schedules a waking thread within tens of microseconds; a process sharing the
# target's CPU makes it wait about half the time (measured: 44-85%).
TARGET_WAIT = 0.15
GENERATOR_WAIT_MS = 1.0
START_LAG_MS = 10.0
THROTTLED_MOST = 0.5
# The test's own pieces (target, generators, mocks) using this share of the host's CPUs
# between them leave nothing for another process to take: the wait is theirs.
EQUIPMENT_FULL = 0.8
# Where the target has CPUs of its own, the generators, mocks and floor share the rest:
# using this share of those CPUs, they delay one another's wake-ups by milliseconds (the
# LLM-proxy example, 2026-12-07: generator 0.30 and mocks 0.23 cores on the one CPU left
# beside a 0.5-CPU proxy, a direct-call floor at p99 13 ms against 2 ms when idle, with no
# other program running). What the floor and the generators feel then is the test's own.
EQUIPMENT_SHARE_BUSY = 0.5
# Other programs using less than this of the host's CPUs could not have held the target's
# for long: a CPU hog beside it takes a whole core, a quiet host's daemons a few percent.
FOREIGN_BUSY = 0.2
# Names of the measured roles that are Plimsoll's equipment, not the system under test
# (services the target calls are part of the system).
EQUIPMENT = ("mock", "generator")
# The derived floor bound: the first FLOOR_STEPS full steps' lowest floor, times
# FLOOR_FACTOR, and at least FLOOR_MARGIN_MS above it (a sub-millisecond floor
# times three is still within a timer tick).
FLOOR_STEPS = 2
FLOOR_FACTOR = 3.0
FLOOR_MARGIN_MS = 5.0


@dataclass(frozen=True)
class Figures:
    """What the runner measured during one step (None: could not be read)."""

    target_cpu_cores: float | None = None  # mean CPU the target used
    target_cpu_wait_cores: float | None = None  # mean threads waiting outside throttling
    target_cpu_wait_source: str | None = None
    target_throttled_ratio: float | None = None  # throttled ÷ total CFS periods
    generator_timeslices: int | None = None  # times the generators' threads were scheduled
    generator_cpu_wait_seconds: float | None = None
    start_lag_p99_ms: float | None = None
    late_tolerance_ms: float | None = None
    floor_ms: float | None = None
    host_steal_share: float | None = None  # of the generators' host, in the window
    # Measured on the target's host only (the local platform): Plimsoll's equipment's
    # mean CPU, by role, and the host's CPUs; None where the pieces run elsewhere.
    equipment_cpu_cores: Mapping[str, float] | None = None
    # The services the target calls (Redis, PostgreSQL), started beside it by the run:
    # the system under test, but the test's own processes, never another program.
    service_cpu_cores: Mapping[str, float] | None = None
    host_cpus: int | None = None
    # The CPUs the generators, mocks and floor share where the target has its own.
    equipment_cpus: int | None = None
    foreign_cpu_cores: float | None = None  # the host's busy CPU that no piece used
    target_wait_unread: str | None = None  # why the target's wait could not be read
    unreadable: Sequence[str] = field(default_factory=tuple)


@dataclass(frozen=True)
class FloorBound:
    ms: float | None
    basis: str


NO_BOUND = FloorBound(None, "no bound yet: the first full step sets the reference")


def floor_bound(configured_s: float | None, earlier: Sequence[StepRecord]) -> FloorBound:
    """The floor bound for the next step: the configured one, else derived from the floor
    the first full steps measured (None until one has)."""
    if configured_s is not None:
        return FloorBound(configured_s * 1000.0, "noise.floorBound")
    firsts = [r for r in earlier if r.kind is TrialKind.FULL and r.floor_ms is not None]
    firsts = firsts[:FLOOR_STEPS]
    if not firsts:
        return NO_BOUND
    reference = min(r.floor_ms for r in firsts if r.floor_ms is not None)
    bound = max(reference * FLOOR_FACTOR, reference + FLOOR_MARGIN_MS)
    steps = ", ".join(str(r.index) for r in firsts)
    return FloorBound(
        bound,
        f"derived: {FLOOR_FACTOR:g}× the lowest floor of step(s) {steps} ({reference:.2f} ms)",
    )


def _share(wait: float | None, used: float | None) -> float | None:
    if wait is None or used is None:
        return None
    runnable = wait + used
    return wait / runnable if runnable > 0 else 0.0


def _per_slice_ms(wait: float | None, slices: int | None) -> float | None:
    if wait is None or slices is None:
        return None
    return wait * 1000.0 / slices if slices > 0 else 0.0


def _not_the_host(figures: Figures, wait: float) -> tuple[str | None, bool]:
    """Whose the target's wait was when not another program's: a sentence naming
    Plimsoll's equipment (True beside it) or the target's own threads (False); None
    when another program may have held the CPU (or nothing on the host was measured)."""
    foreign = figures.foreign_cpu_cores
    if foreign is not None and foreign >= FOREIGN_BUSY:
        return None, False
    pieces = _pieces_full(figures)
    if pieces is not None:
        return (
            f"the target waited for a CPU {wait:.0%} of its runnable time while {pieces}: {_THEIRS}"
        ), True
    if foreign is None:
        return None, False
    return (
        f"the target waited for a CPU {wait:.0%} of its runnable time, but other programs "
        f"used only {foreign:.2f} cores of the host (busy: {FOREIGN_BUSY:g} or more): its "
        "own threads waited for each other, more of them runnable than the CPUs it may use"
    ), False


_THEIRS = (
    "the test's own pieces held them, not a busy host (give the generators and mocks CPUs "
    "of their own for a cleaner measurement)"
)


def _named(cores: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {used:.2f}" for name, used in sorted(cores.items()))


def _pieces_full(figures: Figures) -> str | None:
    """Plimsoll's equipment, the target's services and the target using `EQUIPMENT_FULL`
    of the host's CPUs, in words naming each piece's share; None when they left room (or
    were not measured)."""
    pieces, cpus, used = figures.equipment_cpu_cores, figures.host_cpus, figures.target_cpu_cores
    if not pieces or not cpus or used is None:
        return None
    services = figures.service_cpu_cores or {}
    theirs = sum(pieces.values()) + sum(services.values())
    if used + theirs < EQUIPMENT_FULL * cpus:
        return None
    beside = f", the target's services ({_named(services)} cores)" if services else ""
    return (
        f"Plimsoll's own equipment ({_named(pieces)} cores){beside} and the target used "
        f"{used + theirs:.2f} of the host's {cpus} CPUs"
    )


def _equipment_crowded(figures: Figures) -> str | None:
    """The generators and mocks using `EQUIPMENT_SHARE_BUSY` of the CPUs they share beside
    the target's own, in words; None otherwise. Only what they felt (the floor, their
    wait, their late starts) is theirs then: the target's wait is on CPUs of its own."""
    pieces, own, cpus = figures.equipment_cpu_cores, figures.equipment_cpus, figures.host_cpus
    if not pieces or own is None or cpus is None or own >= cpus:
        return None
    equipment = sum(pieces.values())
    if equipment < EQUIPMENT_SHARE_BUSY * own:
        return None
    return (
        f"Plimsoll's own equipment ({_named(pieces)} cores) used {equipment:.2f} of the "
        f"{own} CPU{'s' if own > 1 else ''} it shares beside the target's own"
    )


def _generator_and_floor_signals(
    figures: Figures, generator_wait_ms: float | None, bound: FloorBound
) -> list[tuple[str, BusySignal]]:
    """The busy signals felt beside the target: the generators' wait for a CPU, their
    late starts, and the direct-call floor over its bound."""
    found = []
    if generator_wait_ms is not None and generator_wait_ms > GENERATOR_WAIT_MS:
        found.append((
            f"the generators waited {generator_wait_ms:,.2f} ms for a CPU each time they woke "
            f"(quiet: under {GENERATOR_WAIT_MS:g} ms)",
            BusySignal.GENERATOR_WAIT,
        ))  # fmt: skip
    lag = figures.start_lag_p99_ms
    if lag is not None and lag > START_LAG_MS:
        found.append((
            f"the generators' starts left late: p99 start lag {lag:,.1f} ms "
            f"(quiet: under {START_LAG_MS:g} ms)",
            BusySignal.START_LAG,
        ))  # fmt: skip
    if figures.floor_ms is not None and bound.ms is not None and figures.floor_ms > bound.ms:
        found.append((
            f"the direct-call floor took {figures.floor_ms:,.1f} ms > {bound.ms:,.1f} ms "
            f"({bound.basis})",
            BusySignal.FLOOR,
        ))  # fmt: skip
    return found


def assess(figures: Figures, bound: FloorBound) -> Contention:
    """The step's contention record: each figure, and whether the host was busy."""
    target = _share(figures.target_cpu_wait_cores, figures.target_cpu_cores)
    generator = _per_slice_ms(figures.generator_cpu_wait_seconds, figures.generator_timeslices)
    signals: list[str] = []
    busy_by: list[BusySignal] = []
    throttled = figures.target_throttled_ratio
    starved = throttled is None or throttled < THROTTLED_MOST
    not_the_host: str | None = None
    pieces_held = False  # the test's own pieces held the host's CPUs the signals felt
    if target is not None and target > TARGET_WAIT and starved:
        not_the_host, pieces_held = _not_the_host(figures, target)
        if not_the_host is None:
            foreign = figures.foreign_cpu_cores
            others = "" if foreign is None else f"; other programs used {foreign:.2f} cores"
            signals.append(
                f"the target waited for a CPU {target:.0%} of its runnable time "
                f"(quiet: under {TARGET_WAIT:.0%}){others}"
            )
            busy_by.append(BusySignal.TARGET_WAIT)
    for signal, kind in _generator_and_floor_signals(figures, generator, bound):
        signals.append(signal)
        busy_by.append(kind)
    foreign = figures.foreign_cpu_cores
    pieces = _pieces_full(figures) or _equipment_crowded(figures)
    if signals and pieces is not None and (foreign is None or foreign < FOREIGN_BUSY):
        # No other program was busy, and the run's own pieces filled the host: the
        # floor, the generators' wait and their late starts were the test's own doing.
        own = f"{'; '.join(signals)}, while {pieces}: {_THEIRS}"
        not_the_host = own if not_the_host is None else f"{not_the_host}; {own}"
        signals, busy_by, pieces_held = [], [], True
    unreadable = list(figures.unreadable)
    if target is None:
        why = figures.target_wait_unread or "not readable on this platform"
        unreadable.append(f"target CPU wait: {why}")
    if generator is None:
        unreadable.append("generator CPU wait: the generators reported none")
    if figures.floor_ms is None:
        unreadable.append("direct-call floor: no samples")
    return Contention(
        target_cpu_wait=target,
        target_cpu_wait_source=figures.target_cpu_wait_source,
        generator_wait_ms=generator,
        start_lag_p99_ms=figures.start_lag_p99_ms,
        late_tolerance_ms=figures.late_tolerance_ms,
        host_steal_share=figures.host_steal_share,
        floor_ms=figures.floor_ms,
        floor_bound_ms=bound.ms,
        floor_bound_basis=bound.basis,
        foreign_cpu_cores=figures.foreign_cpu_cores,
        not_the_host=not_the_host,
        pieces_held_host=pieces_held,
        busy=bool(signals),
        signals=signals,
        busy_by=busy_by,
        unreadable=unreadable,
    )
