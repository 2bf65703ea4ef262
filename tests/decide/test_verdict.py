"""The verdict: every criterion, and the invalid and noisy paths."""

from __future__ import annotations

from typing import Any

import pytest

from plimsoll.api.spec import (
    ErrorBounds,
    Generators,
    LatencyBound,
    Noise,
    PassWhen,
    PromQLBound,
)
from plimsoll.api.step import BusySignal, Contention, ResourceUsage, Verdict
from plimsoll.api.trial import (
    FloorResult,
    OperationResult,
    Outcomes,
    StreamHealth,
    TrialResult,
    TrialState,
)
from plimsoll.api.workload import LoadModel
from plimsoll.decide.step_input import StepInput
from plimsoll.decide.verdict import judge
from plimsoll.shared import histogram

NOISE = Noise()
GENERATORS = Generators()


def hist(*millis: float, times: int = 100) -> str:
    h = histogram.new_histogram()
    for ms in millis:
        for _ in range(times):
            histogram.record_seconds(h, ms / 1000)
    return histogram.encode(h)


def client(**changes: Any) -> TrialResult:
    base: dict[str, Any] = {
        "id": "t",
        "state": TrialState.DONE,
        "level": 100,
        "operations": {
            "api": OperationResult(latency=hist(2, 4), added=hist(1), outcomes=Outcomes(ok=1000)),
            "page": OperationResult(latency=hist(3, 8), ttft=hist(2), outcomes=Outcomes(ok=1000)),
        },
        "floor": FloorResult(latency=hist(1), count=100),
        "nominal": 2000.0,
        "intended": 2000,
        "sent": 2000,
        "sent_on_time": 2000,
        "late_tolerance": 0.1,
        "measured_seconds": 20.0,
        "cpu_seconds": 4.0,
        "cores": 1,
    }
    base.update(changes)
    return TrialResult(**base)


def step(**changes: Any) -> StepInput:
    base: dict[str, Any] = {"client": client(), "level": 100}
    base.update(changes)
    return StepInput(**base)


def test_a_step_that_holds_every_criterion_passes() -> None:
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.010)])
    judgement = judge(step(), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.PASS
    assert judgement.reasons == []
    assert all(c.ok for c in judgement.criteria)
    names = {c.name for c in judgement.criteria}
    assert {
        "p99 total latency of all operations",
        "transport errors",
        "achieved share of schedule",
    } <= names


def test_a_fail_lists_every_failed_criterion_with_its_value_and_bound() -> None:
    bar = PassWhen(
        latency=[
            LatencyBound(quantile=0.99, below=0.005),  # '*' merges api (4 ms) and page (8 ms)
            LatencyBound(operation="api", quantile=0.99, below=0.005),  # holds at 4 ms
            LatencyBound(operation="page", quantile=0.5, below=0.002),
        ],
        errors=ErrorBounds(unexpected=0.001),
    )
    ops = client().operations
    ops["api"] = ops["api"].model_copy(update={"outcomes": Outcomes(ok=990, unexpected=10)})
    judgement = judge(step(client=client(operations=ops)), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    failed = {c.name: c for c in judgement.criteria if not c.ok}
    assert set(failed) == {
        "p99 total latency of all operations",
        "p50 total latency of page",
        "unexpected errors",
    }
    assert failed["p99 total latency of all operations"].measured == pytest.approx(8.0, rel=0.01)
    assert failed["p99 total latency of all operations"].bound == 5.0
    assert failed["unexpected errors"].measured == pytest.approx(10 / 2000)
    assert len(judgement.reasons) == 3
    assert any(
        r.startswith("p99 total latency of all operations 8") and "> 5 ms" in r
        for r in judgement.reasons
    )
    assert "unexpected errors 0.50% > 0.10%" in judgement.reasons


@pytest.mark.parametrize(
    ("metric", "operation", "measured"), [("added", "api", 1.0), ("ttft", "page", 2.0)]
)
def test_added_and_ttft_latency_read_their_own_histograms(
    metric: str, operation: str, measured: float
) -> None:
    bar = PassWhen(
        latency=[LatencyBound(operation="*", quantile=0.99, below=0.0005, metric=metric)]
    )
    judgement = judge(step(), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    (criterion,) = [c for c in judgement.criteria if "latency" in c.name]
    assert criterion.measured == pytest.approx(measured, rel=0.01)


@pytest.mark.parametrize(
    ("outcomes", "failed"),
    [
        (Outcomes(ok=990, transport=10), "transport errors"),
        (Outcomes(ok=900, application=100), None),  # application errors allowed up to 100%
        (Outcomes(ok=999, shed=1), "shed answers"),
    ],
)
def test_errors_are_judged_by_class(outcomes: Outcomes, failed: str | None) -> None:
    ops = {"api": OperationResult(latency=hist(1), outcomes=outcomes)}
    judgement = judge(step(client=client(operations=ops)), PassWhen(), NOISE, GENERATORS)
    bad = [c.name for c in judgement.criteria if not c.ok]
    assert bad == ([failed] if failed else [])
    assert judgement.verdict is (Verdict.FAIL if failed else Verdict.PASS)


def test_an_open_model_step_fails_when_scheduled_starts_left_late_or_were_dropped() -> None:
    late = client(sent=1990, sent_on_time=1800, dropped_starts=10)
    judgement = judge(step(client=late), PassWhen(), NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.reasons == [
        "achieved share of schedule 90.00% < 99.00% (1,800 of 2,000 scheduled starts sent "
        "within 100 ms of schedule; nominal 2,000, 10 dropped)"
    ]


def test_a_poisson_draw_below_the_nominal_count_never_fails_the_achieved_share() -> None:
    # 1,900 starts drawn where the level's mean is 2,000 (-5%, a 2.2-sigma draw), all sent.
    short = client(nominal=2000.0, intended=1900, sent=1900, sent_on_time=1900)
    assert judge(step(client=short), PassWhen(), NOISE, GENERATORS).verdict is Verdict.PASS


def test_a_users_step_compares_starts_sent_with_starts_intended() -> None:
    users = step(level=5000, model=LoadModel.USERS, client=client(sent=1900, sent_on_time=1900))
    judgement = judge(users, PassWhen(), NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    (criterion,) = [c for c in judgement.criteria if not c.ok]
    assert criterion.measured == pytest.approx(0.95)


def test_failure_reasons_write_plain_numbers_and_name_all_operations() -> None:
    slow = {"api": OperationResult(latency=hist(15_400), outcomes=Outcomes(ok=1000))}
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.050)])
    judgement = judge(step(client=client(operations=slow)), bar, NOISE, GENERATORS)
    (reason,) = judgement.reasons
    assert reason.startswith("p99 total latency of all operations 15,")
    assert reason.endswith(" ms > 50 ms")
    assert "e+" not in reason


def test_unhealthy_streams_and_target_crashes_fail() -> None:
    streams = StreamHealth(opened=100, missed_keep_alives=2)
    target = ResourceUsage(source="cgroup", oom_kills=1)
    judgement = judge(
        step(client=client(streams=streams), target=target), PassWhen(), NOISE, GENERATORS
    )
    assert judgement.verdict is Verdict.FAIL
    assert {c.name for c in judgement.criteria if not c.ok} == {
        "unhealthy streams",
        "target restarts and OOM kills",
    }
    relaxed = PassWhen(healthy_streams=False)
    judgement = judge(step(client=client(streams=streams)), relaxed, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.PASS


def test_a_restart_inside_the_window_fails_the_step_though_its_cpu_went_unread() -> None:
    # A real kubelet: the window cut by an OOM kill left each container's counter one
    # cAdvisor sample, so the CPU had no data; the target still died at this level.
    missing = ["no data (query: sum(increase(container_cpu_usage_seconds_total[35s])))"]
    died = ResourceUsage(source="prometheus", restarts=1, oom_kills=1, missing=missing)
    judgement = judge(step(target=died), PassWhen(), NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    assert {c.name for c in judgement.criteria if not c.ok} == {"target restarts and OOM kills"}
    alive = ResourceUsage(source="prometheus", missing=missing)
    assert judge(step(target=alive), PassWhen(), NOISE, GENERATORS).verdict is Verdict.INVALID


def test_promql_bounds_hold_or_fail_and_a_missing_value_is_invalid_naming_the_query() -> None:
    bar = PassWhen(
        promql=[
            PromQLBound(name="calls", query="sum(rate(calls[1m]))", below=2.0),
            PromQLBound(name="hits", query="hit_ratio", above=0.9),
        ]
    )
    assert (
        judge(step(promql={"calls": 1.5, "hits": 0.95}), bar, NOISE, GENERATORS).verdict
        is Verdict.PASS
    )
    failing = judge(step(promql={"calls": 2.5, "hits": 0.5}), bar, NOISE, GENERATORS)
    assert failing.verdict is Verdict.FAIL
    assert failing.reasons == ["calls at most 2.5 > 2", "hits at least 0.5 < 0.9"]
    missing = judge(step(promql={"calls": 1.0, "hits": None}), bar, NOISE, GENERATORS)
    assert missing.verdict is Verdict.INVALID
    assert missing.reasons == ["promql 'hits' returned no value (query: hit_ratio)"]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"client": None}, "a generator returned no result"),
        ({"client": client(state=TrialState.FAILED, errors=["boom"])}, "the trial ended failed"),
        ({"client": client(cpu_seconds=19.0)}, "a generator used 95% of its CPU"),
        ({"client": client(peak_cpu_fraction=0.9)}, "a generator used 90% of its CPU"),
        ({"client": client(dropped_starts=100)}, "dropped 5.00% of starts"),
        (
            {
                "others": {
                    "mock": ResourceUsage(source="cgroup", cpu_mean_cores=0.95, cpu_limit_cores=1)
                }
            },
            "mock used 95% of its CPU",
        ),
        (
            {
                "others": {
                    "mock": ResourceUsage(
                        source="cgroup",
                        cpu_mean_cores=0.04,
                        cpu_limit_cores=0.05,
                        throttled_ratio=0.94,
                    )
                }
            },
            "mock hit its CPU quota in 94% of CFS periods (max 85%): it ran out of CPU",
        ),
        (
            {"target": ResourceUsage(source="prometheus", missing=["memory: no series"])},
            "server metrics missing (memory: no series): have Prometheus scrape every "
            "kubelet's /metrics/cadvisor",
        ),
    ],
)
def test_untrustworthy_measurements_are_invalid(changes: dict[str, Any], reason: str) -> None:
    judgement = judge(step(**changes), PassWhen(), NOISE, GENERATORS)
    assert judgement.verdict is Verdict.INVALID
    assert any(reason in r for r in judgement.reasons), judgement.reasons


def test_a_mock_with_room_in_its_quota_is_not_invalid() -> None:
    # Half its quota and held back in half its periods: short bursts, not saturation.
    mock = ResourceUsage(
        source="cgroup", cpu_mean_cores=0.025, cpu_limit_cores=0.05, throttled_ratio=0.5
    )
    assert judge(step(others={"mock": mock}), PassWhen(), NOISE, GENERATORS).verdict is (
        Verdict.PASS
    )


def test_a_busy_service_is_part_of_the_system_under_test_not_invalid() -> None:
    busy = {"postgres": ResourceUsage(source="cgroup", cpu_mean_cores=1.0, cpu_limit_cores=1)}
    assert judge(step(others=busy), PassWhen(), NOISE, GENERATORS).verdict is Verdict.PASS


def test_no_samples_is_never_a_pass() -> None:
    bar = PassWhen(latency=[LatencyBound(operation="login", quantile=0.99, below=0.1)])
    judgement = judge(step(), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.INVALID
    assert judgement.reasons == ["no data for p99 total latency of login: no data is never a pass"]
    # With a definite failure as well, the step fails (and still lists the missing number).
    empty = client(operations={}, sent=0, sent_on_time=0)
    judgement = judge(step(client=empty), PassWhen(), NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.reasons[0].startswith("achieved share of schedule 0.00% < 99.00%")


def test_a_floor_above_its_bound_or_without_samples_is_noisy() -> None:
    noise = Noise(floor_bound=0.0025)
    assert judge(step(), PassWhen(), noise, GENERATORS).verdict is Verdict.PASS
    stalled = client(floor=FloorResult(latency=hist(1, 30), count=200))
    judgement = judge(step(client=stalled), PassWhen(), noise, GENERATORS)
    assert judgement.verdict is Verdict.NOISY
    assert "host stalled" in judgement.reasons[0]
    assert "30" in judgement.reasons[0]
    for floor in (None, FloorResult(count=0)):
        judgement = judge(step(client=client(floor=floor)), PassWhen(), noise, GENERATORS)
        assert judgement.verdict is Verdict.NOISY
        assert judgement.reasons == ["the direct-call floor had no samples: the host stalled"]


def test_without_a_floor_bound_the_floor_is_not_judged() -> None:
    judgement = judge(step(client=client(floor=None)), PassWhen(), NOISE, GENERATORS)
    assert judgement.verdict is Verdict.PASS


def test_invalid_outranks_noisy_and_noisy_outranks_fail() -> None:
    noise = Noise(floor_bound=0.0025)
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.001)])
    stalled = client(floor=FloorResult(count=0))
    assert judge(step(client=stalled), bar, noise, GENERATORS).verdict is Verdict.NOISY
    saturated = client(floor=FloorResult(count=0), peak_cpu_fraction=0.99)
    assert judge(step(client=saturated), bar, noise, GENERATORS).verdict is Verdict.INVALID


def test_a_failure_on_a_busy_host_is_noisy_and_a_pass_stays_a_pass() -> None:
    busy = Contention(busy=True, signals=["the target waited for a CPU 48% of its runnable time"])
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.005)])  # fails at 8 ms
    judgement = judge(step(contention=busy), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.NOISY
    assert "the host was busy (the target waited for a CPU 48%" in judgement.reasons[0]
    assert "p99 total latency of all operations 8" in judgement.reasons[0]
    assert judge(step(contention=busy), PassWhen(), NOISE, GENERATORS).verdict is Verdict.PASS
    quiet = Contention(busy=False)
    assert judge(step(contention=quiet), bar, NOISE, GENERATORS).verdict is Verdict.FAIL


def test_with_repeat_when_busy_off_a_busy_failure_fails_and_says_the_host_was_busy() -> None:
    busy = Contention(busy=True, signals=["the generators' starts left late"])
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.005)])
    noise = Noise(repeat_when_busy=False)
    judgement = judge(step(contention=busy), bar, noise, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.reasons[-1] == (
        "the host was busy (the generators' starts left late); "
        "noise.repeatWhenBusy is off, so this counts as a fail"
    )


def throttled_target(**changes: Any) -> ResourceUsage:
    """The LLM-proxy example's target at 160 users: 70% of periods throttled at 0.41 of
    its 0.5 CPU."""
    base: dict[str, Any] = {
        "source": "cgroup",
        "cpu_mean_cores": 0.41,
        "cpu_limit_cores": 0.5,
        "throttled_ratio": 0.70,
    }
    base.update(changes)
    return ResourceUsage(**base)


def test_a_failure_the_targets_saturation_explains_is_a_fail_whatever_the_floor() -> None:
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.005)])  # fails at 8 ms
    slow_floor = client(floor=FloorResult(latency=hist(40), count=100))
    floor = Contention(
        busy=True, signals=["the direct-call floor took 40.0 ms > 14.6 ms (derived)"]
    )
    judgement = judge(
        step(client=slow_floor, target=throttled_target(), contention=floor),
        bar,
        NOISE,
        GENERATORS,
    )
    assert judgement.verdict is Verdict.FAIL
    assert judgement.reasons[0].startswith("p99 total latency of all operations 8")
    assert judgement.reasons[-1] == (
        "the host looked busy (the direct-call floor took 40.0 ms > 14.6 ms (derived)), but "
        "the target's own saturation explains the failure (cpu: 70% of 100 ms periods hit "
        "the quota; the p99 bar tolerates 1%): it is the target's"
    )
    # A configured floor bound, exceeded: the same.
    configured = Noise(floor_bound=0.010)
    assert (
        judge(step(client=slow_floor, target=throttled_target()), bar, configured, GENERATORS)
    ).verdict is Verdict.FAIL


def test_a_target_the_host_starved_or_one_with_room_stays_noisy() -> None:
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.005)])
    starved = Contention(
        busy=True,
        target_cpu_wait=0.48,
        signals=["the target waited for a CPU 48% of its runnable time"],
        busy_by=[BusySignal.TARGET_WAIT],
    )
    throttled = step(target=throttled_target(), contention=starved)
    assert judge(throttled, bar, NOISE, GENERATORS).verdict is Verdict.NOISY
    roomy = throttled_target(cpu_mean_cores=0.2, throttled_ratio=0.0)
    slow_floor = client(floor=FloorResult(latency=hist(40), count=100))
    floor_only = step(client=slow_floor, target=roomy)
    assert judge(floor_only, bar, Noise(floor_bound=0.010), GENERATORS).verdict is Verdict.NOISY
    # A step that passes stays a pass, saturated or not.
    loose = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.050)])
    assert judge(throttled, loose, NOISE, GENERATORS).verdict is Verdict.PASS


def test_a_throttled_targets_own_wait_is_no_busy_host_whatever_it_measured() -> None:
    """Issue 51, on Debian's nginx (four workers in one cgroup at 0.05 CPU, 1,600
    requests/s, a quiet host): throttled in most periods, every worker waited through the
    group's throttled time, 80% of its runnable time; the contention decision did not
    count that wait as the host's (it was throttled), and the generators' late starts
    were the only signal. The target's own saturation explains the failure: a fail, not
    a busy host to repeat the level on (it had been noisy four times, then no ceiling)."""
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.005)])  # fails at 8 ms
    late = Contention(
        busy=True,
        target_cpu_wait=0.80,
        signals=["the generators' starts left late: p99 start lag 37.3 ms"],
        busy_by=[BusySignal.START_LAG],
    )
    nginx = throttled_target(cpu_mean_cores=0.05, cpu_limit_cores=0.05, throttled_ratio=0.9)
    judgement = judge(step(target=nginx, contention=late), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL, judgement.reasons
    assert "the target's own saturation explains the failure" in judgement.reasons[-1]


def test_a_failure_while_the_tests_own_pieces_filled_the_host_is_invalid() -> None:
    """Issue 51: the edge example at 3,200 requests/s on two cores, the target 58% idle,
    the floor slow because the generator and the mock held the CPUs: no busy host (it is
    not repeated into the same pieces) and not the target's failure (its ceiling would
    be the host's): invalid, and the search keeps what passed below."""
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.005)])  # fails at 8 ms
    held = Contention(
        busy=False,
        pieces_held_host=True,
        not_the_host="the direct-call floor took 12.7 ms > 7.4 ms (derived), while "
        "Plimsoll's own equipment (generator 1.10, mock 0.35 cores) and the target used "
        "1.87 of the host's 2 CPUs: the test's own pieces held them",
    )
    roomy = throttled_target(cpu_mean_cores=0.42, cpu_limit_cores=1.0, throttled_ratio=0.0)
    judgement = judge(step(target=roomy, contention=held), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.INVALID
    [reason] = judgement.reasons
    assert reason.startswith("p99 total latency of all operations 8")
    assert "generator 1.10, mock 0.35 cores" in reason
    assert "what passed below is a lower bound" in reason
    # The target's own saturation explains it: the target's failure, as on a quiet host.
    saturated = step(target=throttled_target(), contention=held)
    assert judge(saturated, bar, NOISE, GENERATORS).verdict is Verdict.FAIL
    # Nothing failed: a pass is a pass, whoever held the CPUs.
    assert judge(step(target=roomy, contention=held), PassWhen(), NOISE, GENERATORS).verdict is (
        Verdict.PASS
    )


def spread(count: int, low_ms: float, high_ms: float) -> str:
    """`count` samples evenly from low_ms to high_ms."""
    h = histogram.new_histogram()
    for i in range(count):
        histogram.record_seconds(h, (low_ms + (high_ms - low_ms) * i / (count - 1)) / 1000)
    return histogram.encode(h)


def test_a_quantile_whose_interval_straddles_the_bound_is_marginal_either_side() -> None:
    # 1,000 samples from 1 to 100 ms: p99 is 99 ms, its interval about 98.4-99.6 ms.
    one = {"api": OperationResult(latency=spread(1000, 1, 100), outcomes=Outcomes(ok=1000))}
    for below in (0.0989, 0.0991):  # just under and just over the measured p99
        bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=below)])
        judgement = judge(step(client=client(operations=one)), bar, NOISE, GENERATORS)
        assert judgement.verdict is Verdict.MARGINAL
        latency = judgement.criteria[0]
        assert latency.marginal
        assert latency.samples == 1000
        assert latency.low is not None
        assert latency.high is not None
        assert latency.low < below * 1000 < latency.high
        assert "95% interval" in judgement.reasons[0]
        assert judgement.reasons[0].startswith("marginal: p99 total latency of all operations")
    # Far from the bound either way: a definite verdict.
    for below, verdict in ((0.050, Verdict.FAIL), (0.150, Verdict.PASS)):
        bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=below)])
        judged = judge(step(client=client(operations=one)), bar, NOISE, GENERATORS)
        assert judged.verdict is verdict
        assert not judged.criteria[0].marginal


def test_a_definite_failure_outranks_a_marginal_criterion() -> None:
    one = {
        "api": OperationResult(
            latency=spread(1000, 1, 100), outcomes=Outcomes(ok=900, unexpected=100)
        )
    }
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.0991)])
    judgement = judge(step(client=client(operations=one)), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    assert any(r.startswith("unexpected errors 10.00%") for r in judgement.reasons)


def test_a_target_out_of_memory_fails_whatever_the_busy_signals_say() -> None:
    # The quickstart at 350 users: OOM-killed and restarted in the window while the
    # target's CPU wait read 24%; it was judged noisy and repeated, and died again.
    busy = Contention(
        busy=True,
        target_cpu_wait=0.24,
        signals=["the target waited for a CPU 24% of its runnable time"],
    )
    bar = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.005)])  # fails at 8 ms
    killed = ResourceUsage(source="cgroup", oom_kills=1, restarts=1)
    judgement = judge(step(target=killed, contention=busy), bar, NOISE, GENERATORS)
    assert judgement.verdict is Verdict.FAIL
    assert {c.name for c in judgement.criteria if not c.ok} == {
        "p99 total latency of all operations",
        "target restarts and OOM kills",
    }
    assert judgement.reasons[-1] == (
        "the host looked busy (the target waited for a CPU 24% of its runnable time), but the "
        "target ran out of memory (memory: the target was OOM-killed 1 time(s) and restarted "
        "1 time(s)): the failure is the target's, as it would be on a quiet host"
    )
    # At its memory limit without a kill, a slow direct-call floor is set aside too.
    full = ResourceUsage(
        source="cgroup", memory_max_bytes=97 * 2**20, memory_limit_bytes=100 * 2**20
    )
    slow_floor = client(floor=FloorResult(latency=hist(40), count=100))
    judgement = judge(
        step(client=slow_floor, target=full), bar, Noise(floor_bound=0.010), GENERATORS
    )
    assert judgement.verdict is Verdict.FAIL
    assert "the working set reached 97% of the limit" in judgement.reasons[-1]
    # The same failure with room in memory stays noisy: the host may have done it.
    roomy = full.model_copy(update={"memory_max_bytes": 50 * 2**20})
    assert judge(step(target=roomy, contention=busy), bar, NOISE, GENERATORS).verdict is (
        Verdict.NOISY
    )
    # Out of memory but every criterion held (a working set at the limit): still a pass.
    assert judge(step(target=full, contention=busy), PassWhen(), NOISE, GENERATORS).verdict is (
        Verdict.PASS
    )
