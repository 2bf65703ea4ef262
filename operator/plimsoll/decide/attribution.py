"""What limited the target at its ceiling, and the room left at the last passing step.

The runner calls `attribute(last_pass, first_fail, spec.attribution, spec.pass_when)`
when the search has finished, with the highest passing step and the first failing
step above it (each a `StepResult`, or just its target's `ResourceUsage`, or None),
and writes the answer into the ceiling; `sentence` words it for the report. The
verdict asks `quota_breaks_tail`, `saturated` and `memory_exhausted` too: a failure
the target's own saturation explains is the target's, whatever the host's floor says,
and one where it ran out of memory is the target's whatever any busy signal says.
Pure: no metrics are read here.

- memory: the first failing step had an OOM kill or a restart, or either step's
  working set came within `memory_margin` of the limit (memory is checked
  first: a pod near its memory limit also burns CPU reclaiming memory);
- cpu: in either step (both, as for memory), a CPU demand at or above `cpu_busy`
  of the quota, the demand being the CPU it used plus the time its threads were
  runnable but waited for a CPU outside throttling: a target that wanted its
  whole quota is CPU-bound whether the quota or a busy host withheld the rest
  (CI's 1-CPU shape of a 20 ms-per-request target used 0.87 cores at its last
  pass, 48 requests/s, and waited 52-55% of its runnable time: the host's two
  shared cores held it back); or CFS throttling above `throttled` of periods
  even when the mean looks low (bursts hit the quota), judged on the first
  failing step, or the last passing one if nothing failed;
- cpu as well, the tail rule (`quota_breaks_tail`): a latency bound at quantile q
  tolerates a share 1 - q of slow requests. When more than that share of the
  failing step's CFS periods were throttled, and a throttled period stalls the
  target for at least `STALL_SHARE` of the bound, the quota alone makes that
  many requests slow: 19% of periods throttled for tens of milliseconds breaks a
  p99 bar of 50 ms however idle the CPU looks on average. The fixed `throttled`
  threshold stays as the floor of this rule for bars without a latency quantile;
- neither: both were measured and neither was near its limit, so the bar was
  broken by latency (the upstream, a lock, a pool);
- unknown: not enough server metrics to tell (an external URL, a missing limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.spec import Attribution, PassWhen
from plimsoll.api.status import Headroom
from plimsoll.api.step import LimitedBy, ResourceUsage, StepResult

# Fractions people say (a half, a quarter), tried nearest first; anything else is a percentage.
_WORDS = (
    (0.0, "none"),
    (0.1, "a tenth"),
    (0.2, "a fifth"),
    (0.25, "a quarter"),
    (1 / 3, "a third"),
    (0.5, "half"),
    (2 / 3, "two thirds"),
    (0.75, "three quarters"),
    (0.9, "nine tenths"),
    (1.0, "all"),
)
_WORD_TOLERANCE = 0.03

# A throttled period "comparable to the bound": its stall is at least this share of the
# latency bound. A request that arrives in the stall waits for the rest of it, and those
# behind it queue on top, so a stall of a quarter of the bound already pushes the
# requests it catches to the bound on a target that was near it.
STALL_SHARE = 0.25
# Kubernetes' and the kernel's default CFS period, when the source does not say.
DEFAULT_PERIOD_MS = 100.0


@dataclass(frozen=True)
class TailBreach:
    """The quota broke a latency quantile's tail: the figures and the sentence."""

    throttled_ratio: float
    tolerated: float
    stall_ms: float
    period_ms: float
    quantile: float

    @property
    def sentence(self) -> str:
        return (
            f"cpu: {_percent(self.throttled_ratio)} of {self.period_ms:g} ms periods hit the "
            f"quota; the p{self.quantile * 100:g} bar tolerates {_percent(self.tolerated)}"
        )


def attribute(
    last_pass: StepResult | ResourceUsage | None,
    first_fail: StepResult | ResourceUsage | None,
    thresholds: Attribution,
    bar: PassWhen | None = None,
) -> tuple[LimitedBy, Headroom]:
    passed, failed = _target(last_pass), _target(first_fail)
    breach = quota_breaks_tail(failed, bar) if failed is not None and bar is not None else None
    room = headroom(passed)
    limited_by = _limited_by(passed, failed, thresholds)
    if breach is not None and limited_by is not LimitedBy.MEMORY:
        return LimitedBy.CPU, room.model_copy(update={"reason": breach.sentence})
    return limited_by, room


def stall_ms(usage: ResourceUsage) -> float | None:
    """How long one throttled period stalls the target: measured where the source reads
    the throttled time, else the part of the period the quota leaves idle (a target under
    one core that used its quota waits out the rest); None when neither is known."""
    if usage.throttled_stall_ms is not None:
        return usage.throttled_stall_ms
    cores = usage.cpu_limit_cores
    if cores is None or cores >= 1.0:
        return None  # several threads may each stall for any part of the period
    return (usage.cfs_period_ms or DEFAULT_PERIOD_MS) * (1.0 - cores)


def quota_breaks_tail(usage: ResourceUsage, bar: PassWhen) -> TailBreach | None:
    """The tail rule: more periods throttled than a latency quantile tolerates slow
    requests, each stalling the target for a time comparable to the bound. The tightest
    bound it breaks, or None."""
    ratio = usage.throttled_ratio
    stall = stall_ms(usage)
    if ratio is None or stall is None:
        return None
    for bound in sorted(bar.latency, key=lambda b: b.quantile):
        tolerated = 1.0 - bound.quantile
        if ratio > tolerated and stall >= STALL_SHARE * bound.below * 1000.0:
            period = usage.cfs_period_ms or DEFAULT_PERIOD_MS
            return TailBreach(ratio, tolerated, stall, period, bound.quantile)
    return None


def saturated(usage: ResourceUsage | None, thresholds: Attribution, bar: PassWhen) -> str | None:
    """Why the target's own CPU explains a failure (the tail rule, mean use at the quota,
    or throttling above the fixed threshold), or None: the verdict then trusts it over
    the direct-call floor."""
    if usage is None:
        return None
    breach = quota_breaks_tail(usage, bar)
    if breach is not None:
        return breach.sentence
    if usage.throttled_ratio is not None and usage.throttled_ratio > thresholds.throttled:
        return f"cpu: {_percent(usage.throttled_ratio)} of CFS periods hit the quota"
    share = _cpu_share(usage)
    if share is not None and share >= thresholds.cpu_busy:
        return f"cpu: {share:.0%} of the quota in use"
    return None


def memory_exhausted(usage: ResourceUsage | None, thresholds: Attribution) -> str | None:
    """Why the target failed by its own memory (an OOM kill, a restart, a working set
    within `memory_margin` of the limit), or None. The verdict calls such a step a fail
    whatever the host's busy signals say: a target that ran out of memory would have
    run out on an idle host too, and repeating the level only kills it again."""
    if usage is None:
        return None
    if usage.oom_kills > 0 or usage.restarts > 0:
        parts = []
        if usage.oom_kills:
            parts.append(f"OOM-killed {usage.oom_kills} time(s)")
        if usage.restarts:
            parts.append(f"restarted {usage.restarts} time(s)")
        return "memory: the target was " + " and ".join(parts)
    share = _memory_share(usage)
    if share is not None and share >= 1.0 - thresholds.memory_margin:
        return f"memory: the working set reached {share:.0%} of the limit"
    return None


def _percent(share: float) -> str:
    return f"{share:.0%}" if share >= 0.01 else f"{share * 100:.2g}%"


def _target(step: StepResult | ResourceUsage | None) -> ResourceUsage | None:
    return step.target if isinstance(step, StepResult) else step


def _limited_by(
    last_pass: ResourceUsage | None, first_fail: ResourceUsage | None, thresholds: Attribution
) -> LimitedBy:
    if first_fail is not None and (first_fail.oom_kills > 0 or first_fail.restarts > 0):
        return LimitedBy.MEMORY
    memory_known = False
    for usage in (first_fail, last_pass):
        share = _memory_share(usage)
        if share is not None:
            memory_known = True
            if share >= 1.0 - thresholds.memory_margin:
                return LimitedBy.MEMORY
    judged = first_fail if first_fail is not None else last_pass
    if judged is None:
        return LimitedBy.UNKNOWN
    cpu_known = False
    if judged.throttled_ratio is not None:
        cpu_known = True
        if judged.throttled_ratio > thresholds.throttled:
            return LimitedBy.CPU
    for usage in (first_fail, last_pass):
        share = _cpu_demand_share(usage) if usage is not None else None
        if share is not None:
            cpu_known = True
            if share >= thresholds.cpu_busy:
                return LimitedBy.CPU
    return LimitedBy.NEITHER if memory_known and cpu_known else LimitedBy.UNKNOWN


def headroom(last_pass: ResourceUsage | None) -> Headroom:
    """Room left at the last passing step: free memory, idle CPU, in plain words."""
    if last_pass is None:
        return Headroom(summary="no server metrics for the last passing step")
    free: int | None = None
    parts: list[str] = []
    used = _memory_used(last_pass)
    if used is not None and last_pass.memory_limit_bytes:
        free = max(last_pass.memory_limit_bytes - used, 0)
        parts.append(f"{format_bytes(free)} under the limit" if free else "at the memory limit")
    elif used is not None:
        parts.append(f"using {format_bytes(used)} of memory (no limit)")
    idle: float | None = None
    share = _cpu_share(last_pass)
    if share is not None:
        idle = max(1.0 - share, 0.0)
        parts.append(f"{share_in_words(idle)} of the CPU idle")
    elif last_pass.cpu_mean_cores is not None:
        parts.append(f"{last_pass.cpu_mean_cores:.2g} cores busy (no CPU limit)")
    summary = " with ".join(parts) if parts else "no CPU or memory figures"
    return Headroom(memory_free_bytes=free, cpu_idle_fraction=idle, summary=summary)


def sentence(limited_by: LimitedBy, room: Headroom, last_pass: ResourceUsage | None) -> str:
    """The plain sentence: "The ceiling is the pod's 512 MiB of memory, not CPU: ..."."""
    limit = last_pass.memory_limit_bytes if last_pass is not None else None
    cores = last_pass.cpu_limit_cores if last_pass is not None else None
    if limited_by is LimitedBy.MEMORY:
        what = f"the pod's {format_bytes(limit)} of memory" if limit else "memory"
        head = f"The ceiling is {what}, not CPU"
    elif limited_by is LimitedBy.CPU:
        what = f"the pod's {cores:g} CPU" if cores else "CPU"
        head = f"The ceiling is {what}, not memory"
    elif limited_by is LimitedBy.NEITHER:
        head = "The ceiling is latency, not CPU or memory"
    else:
        head = "What limits the target is unknown"
    why = f" ({room.reason})" if room.reason else ""
    return f"{head}{why}: the last passing step runs {room.summary}."


def share_in_words(share: float) -> str:
    value, words = min(_WORDS, key=lambda item: abs(item[0] - share))
    return words if abs(value - share) <= _WORD_TOLERANCE else f"{share:.0%}"


def format_bytes(count: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} B"


def _memory_used(usage: ResourceUsage) -> int | None:
    return usage.memory_max_bytes if usage.memory_max_bytes is not None else usage.memory_mean_bytes


def _memory_share(usage: ResourceUsage | None) -> float | None:
    if usage is None or not usage.memory_limit_bytes:
        return None
    used = _memory_used(usage)
    return None if used is None else used / usage.memory_limit_bytes


def _cpu_demand_share(usage: ResourceUsage) -> float | None:
    """CPU used plus CPU waited for (outside throttling), over the quota."""
    share = _cpu_share(usage)
    if share is None or usage.cpu_wait_cores is None or not usage.cpu_limit_cores:
        return share
    return share + usage.cpu_wait_cores / usage.cpu_limit_cores


def _cpu_share(usage: ResourceUsage) -> float | None:
    if usage.cpu_mean_cores is None or not usage.cpu_limit_cores:
        return None
    return usage.cpu_mean_cores / usage.cpu_limit_cores
