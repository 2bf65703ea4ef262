"""What one trial measured and how it was judged.

`ResourceUsage` is the server side of a step (from cgroups or Prometheus),
`StepResult` joins it with the merged client side and the verdict, and
`StepRecord` is its compact form kept in `status.steps`: small enough for the
resource's status, complete enough for the search to resume from.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from plimsoll.api.autoscale import FlightResult
from plimsoll.api.base import PlimsollModel
from plimsoll.api.faults import FaultOutcome
from plimsoll.api.timeline import Steadiness
from plimsoll.api.trial import TrialResult


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INVALID = "invalid"  # the measurement cannot be trusted
    NOISY = "noisy"  # the host stalled (direct-call floor exceeded): repeat
    MARGINAL = "marginal"  # a criterion's confidence interval straddles its bound: repeat


class TrialKind(StrEnum):
    FULL = "full"
    PROBE = "probe"  # a short trial used only to narrow the bracket


class LimitedBy(StrEnum):
    MEMORY = "memory"
    CPU = "cpu"
    NEITHER = "neither"  # latency-bound: the upstream, a lock, a pool
    UNKNOWN = "unknown"  # no server metrics (an external URL without Prometheus)


class CriterionKind(StrEnum):
    """What a criterion measures, so its wording and direction follow a typed fact."""

    LATENCY = "latency"  # a quantile, in ms, at most its bound
    FLOOR = "floor"  # the direct-call floor's quantile, in ms: the host's, not the target's
    SHARE = "share"  # a share of answers (errors, shed), at most its bound
    ACHIEVED = "achieved"  # the share of scheduled starts sent on time, at least its bound
    GOODPUT = "goodput"  # attainment: the share of requests that were good, at least
    COUNT = "count"  # a count (unhealthy streams, restarts), at most its bound
    AT_MOST = "at most"  # a PromQL value, at most its bound
    AT_LEAST = "at least"  # a PromQL value, at least its bound


class ResourceUsage(PlimsollModel):
    """A process's or pod's resources over a trial window."""

    source: str = Field(description="cgroup, proc or prometheus.")
    cpu_mean_cores: float | None = None
    cpu_peak_cores: float | None = None
    throttled_ratio: float | None = Field(None, description="Throttled / total CFS periods.")
    throttled_stall_ms: float | None = Field(
        None,
        description="Mean time the group stood throttled in each throttled CFS period: how "
        "long a request arriving then waits for the next period. None: not readable here.",
    )
    cfs_period_ms: float | None = Field(None, description="The CFS enforcement period.")
    memory_mean_bytes: int | None = None
    memory_max_bytes: int | None = None
    cpu_limit_cores: float | None = None
    memory_limit_bytes: int | None = None
    restarts: int = 0
    oom_kills: int = 0
    cpu_wait_cores: float | None = Field(
        None,
        description="Mean number of threads runnable but waiting for a CPU while the group "
        "was not throttled: another process held the CPU. None: not readable here.",
    )
    cpu_wait_source: str | None = Field(None, description="schedstat or cpu.pressure.")
    extra: dict[str, float] = Field(default_factory=dict, description="Per-unit metrics.")
    queries: list[str] = Field(default_factory=list, description="The exact PromQL used.")
    missing: list[str] = Field(
        default_factory=list, description="What could not be read, and why: never a silent zero."
    )


class Criterion(PlimsollModel):
    """One line of the bar as judged: the measured value against its bound."""

    name: str
    kind: CriterionKind = CriterionKind.COUNT
    quantile: str | None = Field(
        None, description="A latency or floor criterion's quantile as written: 'p99'."
    )
    measured: float | None = None  # absent in a report written without None fields
    bound: float
    unit: str = ""
    ok: bool
    low: float | None = Field(None, description="95% confidence interval, low end.")
    high: float | None = Field(None, description="95% confidence interval, high end.")
    samples: int | None = Field(None, description="The samples the interval rests on.")
    marginal: bool = Field(
        False, description="The interval straddles the bound: the samples cannot tell."
    )


class BusySignal(StrEnum):
    """Which measurement showed the host busy (`Contention.busy_by`), beside its words."""

    TARGET_WAIT = "targetWait"  # the target waited for a CPU outside its throttling
    GENERATOR_WAIT = "generatorWait"  # the generators waited for a CPU when they woke
    START_LAG = "startLag"  # the generators' scheduled starts left late
    FLOOR = "floor"  # the direct-call floor exceeded its bound


class Contention(PlimsollModel):
    """How busy the host was during a step, as measured beside the trial.

    Each figure is None where it could not be read (`unreadable` says which and
    why). `busy` is the pure decision `plimsoll.decide.contention.assess` took
    from them; a failing step on a busy host is noisy and repeated, never a fail.
    """

    target_cpu_wait: float | None = Field(
        None,
        description="Share of the target's runnable time spent waiting for a CPU outside "
        "throttling: wait ÷ (CPU used + wait).",
    )
    target_cpu_wait_source: str | None = Field(None, description="schedstat or cpu.pressure.")
    generator_wait_ms: float | None = Field(
        None,
        description="Mean delay the generators' threads met each time they woke, waiting for "
        "a CPU (answers are read that much late).",
    )
    start_lag_p99_ms: float | None = Field(
        None, description="How late the generators' scheduled starts left, p99."
    )
    late_tolerance_ms: float | None = None
    host_steal_share: float | None = Field(
        None,
        description="Share of the generators' host CPU time its hypervisor took (steal): "
        "reported, not yet a busy signal (see plimsoll.decide.contention).",
    )
    floor_ms: float | None = Field(None, description="The direct-call floor at its quantile.")
    floor_bound_ms: float | None = None
    floor_bound_basis: str = Field("", description="Configured, or derived from which steps.")
    foreign_cpu_cores: float | None = Field(
        None,
        description="CPU the host's other programs used (its busy CPU less every piece of "
        "the test), where the host is read (local).",
    )
    not_the_host: str | None = Field(
        None,
        description="Why the target's CPU wait was not the host's doing: Plimsoll's own "
        "generators and mocks held the CPUs, or no other program ran (its own threads "
        "waited for each other).",
    )
    pieces_held_host: bool = Field(
        False,
        description="The busy signals felt the test's own pieces (Plimsoll's generators and "
        "mocks beside the target) filling the host's CPUs, no other program: a failure "
        "the target's own saturation does not explain is then invalid, not the target's.",
    )
    busy: bool = False
    signals: list[str] = Field(default_factory=list, description="What showed the host busy.")
    busy_by: list[BusySignal] = Field(
        default_factory=list, description="The same signals, typed: what decisions read."
    )
    unreadable: list[str] = Field(default_factory=list, description="Figures not available.")


class Judgement(PlimsollModel):
    verdict: Verdict
    reasons: list[str] = Field(default_factory=list)
    criteria: list[Criterion] = Field(default_factory=list)


class StepResult(PlimsollModel):
    """Everything one trial produced. Kept in full in the report, not in the status."""

    index: int
    level: int
    variant: str = "default"
    kind: TrialKind = TrialKind.FULL
    attempt: int = 1
    started_at: datetime
    ended_at: datetime
    duration: float
    client: TrialResult | None = None
    target: ResourceUsage | None = None
    others: dict[str, ResourceUsage] = Field(
        default_factory=dict, description="The mock, generators and services."
    )
    contention: Contention | None = None
    judgement: Judgement
    steadiness: Steadiness | None = Field(
        None,
        description="Whether p99 held level through the trial (from `client.timeline`); "
        "None when too few slices answered to tell, or a fault fired.",
    )
    faults: list[FaultOutcome] = Field(
        default_factory=list,
        description="What each fault of trial.faults did: the windows before, during and "
        "after, the errors it caused, the time until p99 recovered.",
    )
    flight: FlightResult | None = Field(
        None, description="A flight's (search.strategy autoscale): what the autoscaler did."
    )


class MarginalFigure(PlimsollModel):
    """The criterion a marginal step could not decide: what it measured, against what."""

    criterion: str = Field(description="The criterion, e.g. 'p95 ttft latency of chat'.")
    measured: float = Field(description="What the step measured.")
    bound: float = Field(description="The bar it straddled.")
    unit: str = Field("", description="ms for latencies; empty for shares and counts.")


class StepRecord(PlimsollModel):
    """A step in `status.steps`: what the search and `kubectl` need, and no histograms."""

    index: int = Field(description="The step's number in the run.")
    level: int = Field(description="The load of the trial: requests per second or modeled users.")
    variant: str = Field("default", description="The variant the step measured.")
    kind: TrialKind = Field(
        TrialKind.FULL, description="full, or probe (a short trial that only narrows the bracket)."
    )
    attempt: int = Field(
        1,
        description="The trial's number at its level and kind: 1 for the first, counting up "
        "through every repeat (noisy, marginal, invalid, or for the spread).",
    )
    duration: float = Field(description="Measured seconds of the trial.")
    verdict: Verdict = Field(
        description="pass, fail, invalid (the measurement cannot be trusted) or noisy (the host "
        "was busy)."
    )
    reasons: list[str] = Field(
        default_factory=list,
        description="Each failed criterion with its measured value and bound, or why the step was "
        "invalid or noisy.",
    )
    p50_ms: float | None = Field(
        None, description="Median latency of all operations, in milliseconds."
    )
    p95_ms: float | None = Field(
        None, description="95th percentile latency of all operations, in milliseconds."
    )
    p99_ms: float | None = Field(
        None, description="99th percentile latency of all operations, in milliseconds."
    )
    added_p99_ms: float | None = Field(
        None, description="p99 of what the target added: client time minus Server-Timing."
    )
    error_rate: float | None = Field(None, description="Transport + unexpected share.")
    achieved_rate: float | None = Field(
        None, description="Requests per second actually sent in the measured window."
    )
    goodput: float | None = Field(
        None,
        description="Requests per second answered as expected and within every latency "
        "bound of their operation.",
    )
    attainment: float | None = Field(
        None, description="The share of requests that were good (goodput ÷ requests)."
    )
    attainment_low: float | None = Field(
        None, description="95% interval of attainment (Wilson), low end."
    )
    attainment_high: float | None = Field(
        None, description="95% interval of attainment (Wilson), high end."
    )
    cpu_cores: float | None = Field(
        None, description="The target's mean CPU use in the window, in cores."
    )
    throttled_ratio: float | None = Field(
        None, description="Share of the target's CFS periods that were throttled."
    )
    memory_bytes: int | None = Field(
        None, description="The target's working-set memory in the window."
    )
    started_at: datetime | None = Field(None, description="When the trial started.")
    summarized: bool | None = Field(
        None,
        description="True for an older step kept in brief (figures dropped, reasons cut) "
        "to bound the status; the report keeps it in full.",
    )
    floor_ms: float | None = Field(
        None, description="The direct-call floor at its quantile: later bounds derive from it."
    )
    busy: bool = Field(False, description="The host was busy during this step.")
    nominal: float | None = Field(None, description="Starts the level asks for in the window.")
    scheduled: int | None = Field(None, description="Starts scheduled in the window.")
    sent_on_time: int | None = Field(None, description="Scheduled starts sent on time.")
    generators: int | None = Field(
        None, description="Generator processes that sent the load (their results merged)."
    )
    generator_cores: float | None = Field(
        None, description="CPU the generators used in the window, in cores (all of them)."
    )
    generator_peak_cpu: float | None = Field(
        None, description="The busiest generator process's share of its core."
    )
    marginal: MarginalFigure | None = Field(
        None,
        description="For a marginal step: the criterion whose interval straddled its bar "
        "(a level that stays marginal reports these as the ceiling's uncertainty).",
    )
