"""Is the host busy? The pure decision, fed tables of figures as the runner measures them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.contention import Figures, FloorBound, assess, floor_bound

NO_BOUND = FloorBound(None, "no bound yet")
QUIET = Figures(
    target_cpu_cores=0.45,
    target_cpu_wait_cores=0.01,
    target_cpu_wait_source="schedstat",
    generator_timeslices=20_000,
    generator_cpu_wait_seconds=0.4,
    start_lag_p99_ms=0.4,
    late_tolerance_ms=10.0,
    floor_ms=0.8,
)


@pytest.mark.parametrize(
    ("changes", "bound", "signal"),
    [
        ({}, NO_BOUND, None),
        ({}, FloorBound(5.8, "derived"), None),
        # a hog on the target's CPU: it waits about as long as it runs
        ({"target_cpu_wait_cores": 0.4}, NO_BOUND, "the target waited for a CPU 47%"),
        # throttled wait is already taken out by the sampler: 0.05 of 0.5 is quiet
        ({"target_cpu_wait_cores": 0.05}, NO_BOUND, None),
        # throttled in most periods it had its whole quota: its wait did not shrink it
        ({"target_cpu_wait_cores": 0.4, "target_throttled_ratio": 0.8}, NO_BOUND, None),
        ({"target_cpu_wait_cores": 0.4, "target_throttled_ratio": 0.1}, NO_BOUND, "the target"),
        # 20,000 wake-ups meeting 0.02 ms each is quiet; 3 ms each is a busy host
        ({"generator_cpu_wait_seconds": 60.0}, NO_BOUND, "the generators waited 3.00 ms"),
        ({"start_lag_p99_ms": 35.0}, NO_BOUND, "p99 start lag 35.0 ms (quiet: under 10 ms)"),
        ({"floor_ms": 12.0}, FloorBound(5.8, "derived"), "the direct-call floor took 12.0 ms"),
        ({"floor_ms": 12.0}, NO_BOUND, None),  # no bound yet: the floor is not judged
    ],
)
def test_each_signal_alone_marks_the_host_busy(
    changes: dict[str, float], bound: FloorBound, signal: str | None
) -> None:
    base = QUIET.__dict__ | changes
    contention = assess(Figures(**base), bound)
    assert contention.busy is (signal is not None)
    if signal is None:
        assert contention.signals == []
    else:
        (only,) = contention.signals
        assert only.startswith(signal) or signal in only


def test_the_hosts_steal_is_reported_but_marks_nothing_busy_yet() -> None:
    contention = assess(Figures(**(QUIET.__dict__ | {"host_steal_share": 0.23})), NO_BOUND)
    assert contention.host_steal_share == 0.23
    assert contention.busy is False


def test_figures_that_cannot_be_read_are_listed_never_taken_as_quiet() -> None:
    contention = assess(Figures(start_lag_p99_ms=0.2, late_tolerance_ms=10.0), NO_BOUND)
    assert contention.busy is False
    assert contention.target_cpu_wait is None
    assert contention.unreadable == [
        "target CPU wait: not readable on this platform",
        "generator CPU wait: the generators reported none",
        "direct-call floor: no samples",
    ]


def record(index: int, floor_ms: float | None, kind: TrialKind = TrialKind.FULL) -> StepRecord:
    return StepRecord(
        index=index,
        level=10 * (index + 1),
        kind=kind,
        duration=15.0,
        verdict=Verdict.PASS,
        floor_ms=floor_ms,
        started_at=datetime(2026, 11, 30, tzinfo=UTC),
    )


def test_a_configured_floor_bound_wins_over_the_derived_one() -> None:
    bound = floor_bound(0.004, [record(0, 1.0)])
    assert bound.ms == pytest.approx(4.0)
    assert bound.basis == "noise.floorBound"


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([], None),
        ([record(0, None)], None),
        ([record(0, 1.0)], 6.0),  # 1 ms + 5 ms margin beats 3x
        ([record(0, 4.0), record(1, 3.0)], 9.0),  # 3x the lower of the first two
        ([record(0, 4.0), record(1, 3.0), record(2, 0.5)], 9.0),  # later steps never lower it
        ([record(0, 0.5, TrialKind.PROBE), record(1, 4.0)], 12.0),  # full steps only
    ],
)
def test_the_derived_floor_bound_comes_from_the_first_full_steps(
    history: list[StepRecord], expected: float | None
) -> None:
    bound = floor_bound(None, history)
    assert bound.ms == (pytest.approx(expected) if expected is not None else None)


def test_a_wait_plimsolls_own_equipment_explains_is_named_as_such_not_a_busy_host() -> None:
    # A 2-CPU host: the target used 0.45 cores and waited 47% of its runnable time while
    # the generator and the mock used 1.3 cores between them, other programs 0.05.
    equipment = {"generator": 1.0, "mock": 0.3}
    crowded = Figures(
        **(
            QUIET.__dict__
            | {
                "target_cpu_wait_cores": 0.4,
                "equipment_cpu_cores": equipment,
                "host_cpus": 2,
                "foreign_cpu_cores": 0.05,
            }
        )
    )
    contention = assess(crowded, NO_BOUND)
    assert contention.busy is False
    assert contention.signals == []
    assert contention.foreign_cpu_cores == 0.05
    assert contention.not_the_host == (
        "the target waited for a CPU 47% of its runnable time while Plimsoll's own equipment "
        "(generator 1.00, mock 0.30 cores) and the target used 1.75 of the host's 2 CPUs: the "
        "test's own pieces held them, not a busy host (give the generators and mocks CPUs "
        "of their own for a cleaner measurement)"
    )
    # Where the host's total could not be read, the equipment still explains it.
    unread = Figures(**(crowded.__dict__ | {"foreign_cpu_cores": None}))
    assert assess(unread, NO_BOUND).not_the_host == contention.not_the_host
    # Other programs took a core beside it: the host was busy, whatever ours used.
    hogged = Figures(**(crowded.__dict__ | {"foreign_cpu_cores": 1.0}))
    contention = assess(hogged, NO_BOUND)
    assert contention.busy is True
    assert contention.not_the_host is None
    assert contention.signals[0].endswith("; other programs used 1.00 cores")
    # Not measured on the target's host (a cluster): the wait alone decides, as before.
    elsewhere = Figures(**(crowded.__dict__ | {"host_cpus": None, "foreign_cpu_cores": None}))
    assert assess(elsewhere, NO_BOUND).busy is True


def test_a_many_threaded_target_waiting_for_its_own_threads_is_not_a_busy_host() -> None:
    # Eight runnable threads under a 0.5-CPU quota on a host where nothing else ran: they
    # waited for each other (and for the quota, already taken off), not for the host.
    own = Figures(
        **(
            QUIET.__dict__
            | {
                "target_cpu_wait_cores": 0.4,
                "target_throttled_ratio": 0.3,
                "equipment_cpu_cores": {"generator": 0.2},
                "host_cpus": 2,
                "foreign_cpu_cores": 0.04,
            }
        )
    )
    contention = assess(own, NO_BOUND)
    assert contention.busy is False
    assert contention.not_the_host == (
        "the target waited for a CPU 47% of its runnable time, but other programs used only "
        "0.04 cores of the host (busy: 0.2 or more): its own threads waited for each other, "
        "more of them runnable than the CPUs it may use"
    )


def test_signals_the_tests_own_pieces_explain_are_named_not_a_busy_host() -> None:
    """The floor, the generators' wait and their late starts, felt while the generator,
    the mock and the target filled a 2-CPU host and no other program was busy (issue 51:
    the edge example at 3,200 requests/s was called noisy four times on a quiet host)."""
    full = Figures(
        **(
            QUIET.__dict__
            | {
                "target_cpu_cores": 0.42,
                "floor_ms": 12.7,
                "start_lag_p99_ms": 25.0,
                "equipment_cpu_cores": {"generator": 1.1, "mock": 0.35},
                "host_cpus": 2,
                "foreign_cpu_cores": 0.03,
            }
        )
    )
    bound = FloorBound(7.4, "derived")
    contention = assess(full, bound)
    assert contention.busy is False
    assert contention.signals == []
    assert contention.busy_by == []
    assert contention.pieces_held_host is True
    assert contention.not_the_host is not None
    assert contention.not_the_host.startswith(
        "the generators' starts left late: p99 start lag 25.0 ms (quiet: under 10 ms); "
        "the direct-call floor took 12.7 ms > 7.4 ms (derived), while Plimsoll's own "
        "equipment (generator 1.10, mock 0.35 cores) and the target used 1.87 of the host's "
        "2 CPUs"
    )
    # Another program busy beside them: the host was busy, as before.
    hogged = assess(Figures(**(full.__dict__ | {"foreign_cpu_cores": 0.9})), bound)
    assert hogged.busy is True
    assert hogged.pieces_held_host is False
    # The pieces left room: the signals are the host's.
    roomy = {"equipment_cpu_cores": {"generator": 0.3, "mock": 0.1}}
    assert assess(Figures(**(full.__dict__ | roomy)), bound).busy is True
    # Not measured on the target's host (a cluster): the signals decide, as before.
    elsewhere = {"host_cpus": None, "equipment_cpu_cores": None, "foreign_cpu_cores": None}
    assert assess(Figures(**(full.__dict__ | elsewhere)), bound).busy is True


def test_a_wait_the_equipment_explains_marks_the_pieces_and_the_own_threads_do_not() -> None:
    crowded = Figures(
        **(
            QUIET.__dict__
            | {
                "target_cpu_wait_cores": 0.4,
                "equipment_cpu_cores": {"generator": 1.0, "mock": 0.3},
                "host_cpus": 2,
                "foreign_cpu_cores": 0.05,
            }
        )
    )
    assert assess(crowded, NO_BOUND).pieces_held_host is True
    own = Figures(**(crowded.__dict__ | {"equipment_cpu_cores": {"generator": 0.2}}))
    assert assess(own, NO_BOUND).pieces_held_host is False


def test_the_targets_services_count_among_the_tests_own_pieces() -> None:
    """Redis beside the edge is the test's own process, never another program: with it the
    pieces fill the host; without it they leave room and the floor is the host's."""
    figures = Figures(
        **(
            QUIET.__dict__
            | {
                "target_cpu_cores": 0.7,
                "floor_ms": 9.0,
                "equipment_cpu_cores": {"generator": 0.4, "mock": 0.2},
                "service_cpu_cores": {"valkey": 0.35},
                "host_cpus": 2,
                "foreign_cpu_cores": 0.02,
            }
        )
    )
    bound = FloorBound(6.4, "derived")
    contention = assess(figures, bound)
    assert contention.busy is False
    assert contention.pieces_held_host is True
    assert contention.not_the_host is not None
    assert (
        "Plimsoll's own equipment (generator 0.40, mock 0.20 cores), the target's services "
        "(valkey 0.35 cores) and the target used 1.65 of the host's 2 CPUs"
    ) in contention.not_the_host
    alone = Figures(**(figures.__dict__ | {"service_cpu_cores": None}))
    assert assess(alone, bound).busy is True


def test_equipment_crowding_the_cpu_beside_the_targets_own_explains_the_floor() -> None:
    """The LLM-proxy example at 320 users: the proxy on a CPU of its own, the generator and
    mocks sharing the other at 0.53 cores, the floor at 13 ms, no other program busy."""
    figures = Figures(
        **(
            QUIET.__dict__
            | {
                "target_cpu_cores": 0.42,
                "floor_ms": 13.3,
                "equipment_cpu_cores": {"generator": 0.30, "mock": 0.21, "mock-auth": 0.02},
                "host_cpus": 2,
                "equipment_cpus": 1,
                "foreign_cpu_cores": 0.0,
            }
        )
    )
    bound = FloorBound(7.1, "derived")
    contention = assess(figures, bound)
    assert contention.busy is False
    assert contention.pieces_held_host is True
    assert contention.not_the_host is not None
    assert (
        "Plimsoll's own equipment (generator 0.30, mock 0.21, mock-auth 0.02 cores) used "
        "0.53 of the 1 CPU it shares beside the target's own"
    ) in contention.not_the_host
    # They left room on their CPU: the floor is the host's.
    light = {"equipment_cpu_cores": {"generator": 0.2, "mock": 0.1}}
    assert assess(Figures(**(figures.__dict__ | light)), bound).busy is True
    # Another program busy: the host's.
    assert assess(Figures(**(figures.__dict__ | {"foreign_cpu_cores": 0.6})), bound).busy is True
    # The equipment shares the target's CPUs: only the whole host's rule applies.
    assert assess(Figures(**(figures.__dict__ | {"equipment_cpus": None})), bound).busy is True
    # The target's own wait is on its own CPUs: its own threads', never the equipment's.
    waited = Figures(**(figures.__dict__ | {"floor_ms": 1.0, "target_cpu_wait_cores": 0.2}))
    own = assess(waited, bound)
    assert own.pieces_held_host is False
    assert own.not_the_host is not None
    assert "its own threads waited for each other" in own.not_the_host
