"""Attribution: memory, cpu, neither or unknown, and the headroom in the seeds' words."""

from __future__ import annotations

from typing import Any

import pytest

from plimsoll.api.spec import Attribution, LatencyBound, PassWhen
from plimsoll.api.step import LimitedBy, ResourceUsage
from plimsoll.decide.attribution import (
    attribute,
    format_bytes,
    quota_breaks_tail,
    saturated,
    sentence,
    share_in_words,
    stall_ms,
)

MIB = 2**20
THRESHOLDS = Attribution()


def usage(**changes: Any) -> ResourceUsage:
    base: dict[str, Any] = {
        "source": "cgroup",
        "cpu_mean_cores": 0.5,
        "cpu_limit_cores": 1.0,
        "throttled_ratio": 0.0,
        "memory_max_bytes": 200 * MIB,
        "memory_limit_bytes": 512 * MIB,
    }
    base.update(changes)
    return ResourceUsage(**base)


def test_the_mcp_gateway_seed_reads_as_the_seed_says() -> None:
    last_pass = usage(memory_max_bytes=507 * MIB, cpu_mean_cores=0.75)
    first_fail = usage(memory_max_bytes=511 * MIB, cpu_mean_cores=0.78)
    limited_by, room = attribute(last_pass, first_fail, THRESHOLDS)
    assert limited_by is LimitedBy.MEMORY
    assert room.memory_free_bytes == 5 * MIB
    assert room.cpu_idle_fraction == pytest.approx(0.25)
    assert room.summary == "5 MiB under the limit with a quarter of the CPU idle"
    assert sentence(limited_by, room, last_pass) == (
        "The ceiling is the pod's 512 MiB of memory, not CPU: the last passing step runs "
        "5 MiB under the limit with a quarter of the CPU idle."
    )


@pytest.mark.parametrize("crash", [{"oom_kills": 1}, {"restarts": 2}])
def test_an_oom_kill_or_restart_in_the_first_failing_step_is_memory(crash: dict[str, int]) -> None:
    limited_by, _ = attribute(usage(), usage(**crash), THRESHOLDS)
    assert limited_by is LimitedBy.MEMORY


def test_the_memory_margin_is_configurable() -> None:
    near = usage(memory_max_bytes=480 * MIB)  # 6% under the limit
    assert attribute(near, near, THRESHOLDS)[0] is LimitedBy.NEITHER
    assert attribute(near, near, Attribution(memory_margin=0.1))[0] is LimitedBy.MEMORY


def test_busy_cpu_or_heavy_throttling_is_cpu_even_with_a_low_mean() -> None:
    busy = usage(cpu_mean_cores=0.95)
    assert attribute(usage(), busy, THRESHOLDS)[0] is LimitedBy.CPU
    throttled = usage(cpu_mean_cores=0.4, throttled_ratio=0.35)
    assert attribute(usage(), throttled, THRESHOLDS)[0] is LimitedBy.CPU
    assert attribute(usage(), throttled, Attribution(throttled=0.5))[0] is LimitedBy.NEITHER


def test_a_target_that_wanted_its_whole_quota_is_cpu_though_a_busy_host_withheld_it() -> None:
    # CI's 1-CPU shape of a CPU-bound target: at its last pass (48 rps of 20 ms each) it
    # used 0.87 cores and waited for a CPU 52% of its runnable time: it wanted about 1.8.
    held_back = usage(cpu_mean_cores=0.87, cpu_wait_cores=0.94)
    assert attribute(held_back, usage(cpu_mean_cores=0.5), THRESHOLDS)[0] is LimitedBy.CPU
    assert attribute(usage(), held_back, THRESHOLDS)[0] is LimitedBy.CPU
    at_quota = usage(cpu_mean_cores=0.958)  # either step, as memory is
    assert attribute(at_quota, usage(cpu_mean_cores=0.84), THRESHOLDS)[0] is LimitedBy.CPU
    # A latency-bound target neither uses nor waits for its quota.
    idle = usage(cpu_mean_cores=0.3, cpu_wait_cores=0.02)
    assert attribute(idle, idle, THRESHOLDS)[0] is LimitedBy.NEITHER


def test_neither_near_its_limit_is_latency_bound() -> None:
    limited_by, room = attribute(usage(), usage(cpu_mean_cores=0.3), THRESHOLDS)
    assert limited_by is LimitedBy.NEITHER
    assert room.summary == "312 MiB under the limit with half of the CPU idle"
    assert sentence(limited_by, room, usage()).startswith("The ceiling is latency")


def test_without_metrics_it_is_unknown() -> None:
    limited_by, room = attribute(None, None, THRESHOLDS)
    assert limited_by is LimitedBy.UNKNOWN
    assert room.summary == "no server metrics for the last passing step"
    # CPU measured but memory not: it cannot say "neither".
    cpu_only = usage(memory_max_bytes=None, memory_limit_bytes=None)
    assert attribute(cpu_only, cpu_only, THRESHOLDS)[0] is LimitedBy.UNKNOWN


def test_a_ceiling_at_the_limit_is_judged_on_the_last_pass() -> None:
    assert attribute(usage(cpu_mean_cores=0.97), None, THRESHOLDS)[0] is LimitedBy.CPU
    assert attribute(usage(), None, THRESHOLDS)[0] is LimitedBy.NEITHER


def test_headroom_without_limits_says_what_was_used() -> None:
    free = usage(memory_limit_bytes=None, cpu_limit_cores=None, memory_max_bytes=76 * MIB)
    _, room = attribute(free, None, THRESHOLDS)
    assert room.summary == "using 76 MiB of memory (no limit) with 0.5 cores busy (no CPU limit)"
    assert room.memory_free_bytes is None
    assert room.cpu_idle_fraction is None


@pytest.mark.parametrize(
    ("share", "words"),
    [
        (0.0, "none"),
        (0.26, "a quarter"),
        (0.33, "a third"),
        (0.5, "half"),
        (0.42, "42%"),
        (0.98, "all"),
    ],
)
def test_shares_in_the_seeds_words(share: float, words: str) -> None:
    assert share_in_words(share) == words


def test_bytes_in_binary_units() -> None:
    assert [format_bytes(n) for n in (512, 72 * 1024, 5 * MIB, 3 * 2**29)] == [
        "512 B",
        "72 KiB",
        "5 MiB",
        "1.5 GiB",
    ]


def test_step_results_are_read_through_their_target_usage() -> None:
    from datetime import UTC, datetime

    from plimsoll.api.step import Judgement, StepResult, Verdict

    def result(level: int, verdict: Verdict, target: ResourceUsage | None) -> StepResult:
        now = datetime(2026, 1, 1, tzinfo=UTC)
        return StepResult(
            index=level,
            level=level,
            started_at=now,
            ended_at=now,
            duration=60.0,
            target=target,
            judgement=Judgement(verdict=verdict),
        )

    passed = result(100, Verdict.PASS, usage(cpu_mean_cores=0.75))
    failed = result(110, Verdict.FAIL, usage(oom_kills=1))
    limited_by, room = attribute(passed, failed, THRESHOLDS)
    assert limited_by is LimitedBy.MEMORY
    assert room.cpu_idle_fraction == pytest.approx(0.25)
    assert attribute(result(100, Verdict.PASS, None), None, THRESHOLDS)[0] is LimitedBy.UNKNOWN


# The target: 2 ms of CPU per request pinned to 0.5 CPU, bar p99 < 50 ms.
P99_50MS = PassWhen(latency=[LatencyBound(quantile=0.99, below=0.050)])


def bursty(**changes: Any) -> ResourceUsage:
    """The failing step at 187 rps: 37% of the quota used on average, 19% of periods
    throttled, each throttled period stalling the target about 30 ms."""
    base: dict[str, Any] = {
        "cpu_mean_cores": 0.37,
        "cpu_limit_cores": 0.5,
        "throttled_ratio": 0.19,
        "throttled_stall_ms": 30.0,
        "cfs_period_ms": 100.0,
    }
    base.update(changes)
    return usage(**base)


def test_throttling_beyond_the_tail_the_bar_tolerates_is_the_quota() -> None:
    passed = bursty(throttled_ratio=0.05, cpu_mean_cores=0.36)
    limited_by, room = attribute(passed, bursty(), THRESHOLDS, P99_50MS)
    assert limited_by is LimitedBy.CPU
    assert room.reason == "cpu: 19% of 100 ms periods hit the quota; the p99 bar tolerates 1%"
    assert sentence(limited_by, room, passed).startswith(
        "The ceiling is the pod's 0.5 CPU, not memory (cpu: 19% of 100 ms periods hit the "
        "quota; the p99 bar tolerates 1%)"
    )
    # Without the bar only the fixed threshold (20%) judges, and 19% is under it.
    assert attribute(passed, bursty(), THRESHOLDS)[0] is LimitedBy.NEITHER


def test_throttling_within_the_tolerated_tail_is_not_the_quota() -> None:
    few = bursty(throttled_ratio=0.008)
    limited_by, room = attribute(usage(), few, THRESHOLDS, P99_50MS)
    assert limited_by is LimitedBy.NEITHER
    assert room.reason == ""
    # A looser quantile tolerates more: p80 allows 20% of requests slow.
    p80 = PassWhen(latency=[LatencyBound(quantile=0.80, below=0.050)])
    assert quota_breaks_tail(bursty(), p80) is None


def test_a_stall_far_shorter_than_the_bound_does_not_break_it() -> None:
    short = bursty(throttled_stall_ms=2.0)
    assert quota_breaks_tail(short, P99_50MS) is None
    assert attribute(usage(), short, THRESHOLDS, P99_50MS)[0] is LimitedBy.NEITHER
    # Comparable: a quarter of the bound.
    assert quota_breaks_tail(bursty(throttled_stall_ms=12.5), P99_50MS) is not None
    assert quota_breaks_tail(bursty(throttled_stall_ms=12.4), P99_50MS) is None


def test_the_stall_is_estimated_from_the_quota_when_the_source_does_not_read_it() -> None:
    unread = bursty(throttled_stall_ms=None, cfs_period_ms=None)
    assert stall_ms(unread) == pytest.approx(50.0)  # the default 100 ms period, half idle
    assert quota_breaks_tail(unread, P99_50MS) is not None
    # At a core or more, several threads may stall for any part of the period: unknown.
    assert stall_ms(bursty(throttled_stall_ms=None, cpu_limit_cores=2.0)) is None
    assert quota_breaks_tail(bursty(throttled_stall_ms=None, cpu_limit_cores=2.0), P99_50MS) is None


def test_memory_still_outranks_the_tail_rule() -> None:
    crashed = bursty(oom_kills=1)
    assert attribute(usage(), crashed, THRESHOLDS, P99_50MS)[0] is LimitedBy.MEMORY


def test_saturation_names_the_tail_rule_the_fixed_threshold_or_the_quota_in_use() -> None:
    assert saturated(bursty(), THRESHOLDS, P99_50MS) == (
        "cpu: 19% of 100 ms periods hit the quota; the p99 bar tolerates 1%"
    )
    # The LLM-proxy example at 160 users: 70% of periods throttled at 0.41 of 0.5 CPU.
    llm = usage(cpu_mean_cores=0.41, cpu_limit_cores=0.5, throttled_ratio=0.70)
    assert saturated(llm, THRESHOLDS, PassWhen()) == "cpu: 70% of CFS periods hit the quota"
    busy = usage(cpu_mean_cores=0.48, cpu_limit_cores=0.5, throttled_ratio=0.0)
    assert saturated(busy, THRESHOLDS, PassWhen()) == "cpu: 96% of the quota in use"
    assert saturated(usage(), THRESHOLDS, P99_50MS) is None
    assert saturated(None, THRESHOLDS, P99_50MS) is None
