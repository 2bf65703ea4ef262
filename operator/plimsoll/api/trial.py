"""What crosses the generators' control API: a trial request and its result.

The runner `POST`s a `TrialRequest` to every generator (`/trials`), then polls
`GET /trials/{id}` for a `TrialResult`. Latencies travel as encoded
HdrHistograms so results from several processes and pods merge exactly (see
`plimsoll.shared.histogram`); counts are plain integers and add up.
"""

from __future__ import annotations

import ipaddress
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.timeline import DEFAULT_SLICE_SECONDS, TimelineSlice
from plimsoll.api.workload import ClientIps, Workload


def _networks(networks: list[str]) -> list[str]:
    for network in networks:
        try:
            ipaddress.ip_network(network)
        except ValueError:
            raise ValueError(f"{network!r} is not a network such as 169.254.0.0/16") from None
    return networks


# The networks a generator may not connect the target in: a trial's and a streams hold's.
RefusedNetworks = Annotated[list[str], AfterValidator(_networks)]
# Each refused IPv4 network comes with its four IPv6 spellings (plimsoll.decide.target_policy),
# so a cluster with a dozen API server addresses needs about a hundred.
MAX_REFUSED_NETWORKS = 256


class FloorProbe(PlimsollModel):
    """The direct call that bypasses the target: its latency tells host noise from cost."""

    url: str = Field(pattern=r"^https?://")
    rate: float = Field(20.0, gt=0, le=1000)


# The control API's shared secret: the generator reads it from this variable, the
# runner sends it in this header (not Authorization, which the API server's pod proxy
# keeps for itself). Without it any pod could take a run's trial slot or aim the load.
CONTROL_TOKEN_ENV = "PLIMSOLL_CONTROL_TOKEN"
CONTROL_TOKEN_HEADER = "X-Plimsoll-Control-Token"
# The run namespace's Secret holding the token (a variant's: this name plus a suffix).
# Here, not in plimsoll.kube, because the spec's checks refuse references to it.
CONTROL_TOKEN_SECRET = "plimsoll-control-token"


class RequestBound(PlimsollModel):
    """A latency every single request of `operation` ('*': of every operation) must keep
    to count as good: the generator judges each answer against the bounds that cover
    its operation (`plimsoll.decide.goodput` derives them from the bar)."""

    operation: str = Field("*", max_length=253, description="An operation of the mix, or '*'.")
    metric: str = Field("total", pattern=r"^(total|ttft|added)$")
    within: float = Field(gt=0, le=86_400, description="Seconds the metric may take.")


class TrialRequest(PlimsollModel):
    level: float = Field(ge=0, description="This generator's share of the trial's level.")
    duration: float = Field(gt=0, le=86_400, description="Measured seconds, after warm-up.")
    warm_up: float = Field(0.0, ge=0, le=3600)
    workload: Workload
    target_url: str = Field(pattern=r"^https?://")
    floor: FloorProbe | None = None
    seed: int = 0
    first_user: int = Field(
        0, ge=0, description="Index of this generator's first user, so ids never collide."
    )
    client_ip_offset: int = Field(0, ge=0)
    replay_part: int = Field(
        0, ge=0, description="Model 'replay': this process replays the clients of this part..."
    )
    replay_parts: int = Field(1, ge=1, description="...of this many (split by client hash).")
    replica_urls: list[str] = Field(
        default_factory=list,
        max_length=64,
        description="Every replica's URL when the target runs more than one (the first is "
        "`target_url`): connections are spread over them in turn.",
    )
    serving_replicas: int | None = Field(
        None,
        ge=1,
        le=64,
        description="Of `replica_urls`, how many serve when the trial starts (the first "
        "ones); the others are an autoscaler's room to grow: left out until they listen, "
        "as a pod joins its Service once ready. None: every one serves.",
    )
    slice_seconds: float = Field(
        DEFAULT_SLICE_SECONDS,
        ge=0.1,
        le=3600,
        description="Width of the timeline's slices: one histogram and set of counts each.",
    )
    refused_networks: RefusedNetworks = Field(
        default_factory=list,
        max_length=MAX_REFUSED_NETWORKS,
        description="CIDRs the target's addresses may not fall in (on a cluster: metadata, "
        "the API server, loopback): the generator resolves the target's host, refuses the "
        "trial if any address is in one, and connects only to the address it checked.",
    )
    request_bounds: list[RequestBound] = Field(
        default_factory=list,
        max_length=256,
        description="The latency bounds each request is judged against for goodput; "
        "none: every answer of the expected class is good.",
    )
    start_at: float | None = Field(
        None,
        gt=0,
        description="Unix time, on this generator's own clock, at which its warm-up begins, "
        "so that several generators start together (`plimsoll.decide.clock`); None: at once.",
    )


class ClockReading(PlimsollModel):
    """`GET /clock`: the generator's wall clock, for the runner to measure its offset."""

    unix: float = Field(gt=0, description="time.time() when the generator answered.")


class TrialState(StrEnum):
    RUNNING = "running"
    DONE = "done"
    ABORTED = "aborted"
    FAILED = "failed"


class Outcomes(PlimsollModel):
    """Answers by class. `ok + application + unexpected + shed` answers came back."""

    ok: int = 0
    application: int = 0  # an expected error: a tool error, a modeled failure
    transport: int = 0  # connect, reset, timeout: no answer
    unexpected: int = 0  # wrong status or shape
    shed: int = 0  # 429 / 503: the target refused load

    @property
    def total(self) -> int:
        return self.ok + self.application + self.transport + self.unexpected + self.shed

    def __add__(self, other: Outcomes) -> Outcomes:
        return Outcomes(
            ok=self.ok + other.ok,
            application=self.application + other.application,
            transport=self.transport + other.transport,
            unexpected=self.unexpected + other.unexpected,
            shed=self.shed + other.shed,
        )


class OperationResult(PlimsollModel):
    """One operation of the mix: its latency histograms (encoded) and outcomes."""

    latency: str = Field(description="HdrHistogram of total latency, microseconds, encoded.")
    ttft: str | None = Field(None, description="Time to first token / byte, for streams.")
    added: str | None = Field(
        None, description="Client latency minus the upstream's Server-Timing, microseconds."
    )
    outcomes: Outcomes = Field(default_factory=Outcomes)
    good: int | None = Field(
        None,
        ge=0,
        description="Answers of the expected class within every request bound of the "
        "operation (`TrialRequest.request_bounds`); None: not judged.",
    )


class StreamHealth(PlimsollModel):
    opened: int = 0
    failed_to_open: int = 0
    dropped: int = 0  # closed by the server before the end of the trial
    missed_keep_alives: int = 0  # silent for longer than the keep-alive timeout
    held_at_end: int = 0
    keep_alives: int = Field(
        0, description="Signs of life received: SSE chunks, WebSocket pings and messages."
    )


class FloorResult(PlimsollModel):
    latency: str | None = None
    count: int = 0
    errors: int = 0


class TrialResult(PlimsollModel):
    id: str
    state: TrialState
    level: float
    operations: dict[str, OperationResult] = Field(default_factory=dict)
    streams: StreamHealth = Field(default_factory=StreamHealth)
    floor: FloorResult | None = None
    nominal: float = Field(
        0.0, description="Starts the level asks for over the measured window: level × seconds."
    )
    intended: int = Field(
        0,
        description="Starts scheduled inside the measured window (the open model's Poisson "
        "or uniform draw; a closed loop's starts).",
    )
    sent: int = 0
    sent_on_time: int = Field(
        0, description="Scheduled starts sent within `late_tolerance` of their intended time."
    )
    late_tolerance: float = Field(0.0, description="Seconds a start may leave late and count.")
    start_lag: str | None = Field(
        None, description="HdrHistogram of how late scheduled starts left, microseconds."
    )
    dropped_starts: int = Field(0, description="Starts skipped at the in-flight cap.")
    page_views: int = Field(0, description="Modeled users' page views sent in the window.")
    bot_requests: int = Field(
        0, description="Requests the modeled users' bots sent in the window (of `sent`)."
    )
    measured_seconds: float = 0.0
    cpu_seconds: float = Field(0.0, description="The generator's own CPU time in the window.")
    cpu_wait_seconds: float | None = Field(
        None,
        description="Time the generator's threads were runnable but waited for a CPU "
        "(schedstat), in the window: its host was busy. None: not readable.",
    )
    cpu_timeslices: int | None = Field(
        None,
        description="How many times the generator's threads were scheduled in the window: "
        "cpu_wait_seconds ÷ this is the mean delay each wake-up met.",
    )
    host_steal_share: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Share of the generator host's CPU time that its hypervisor took "
        "(steal, /proc/stat) in the window; across generators, the highest. None: not "
        "readable.",
    )
    started_late_seconds: float = Field(
        0.0,
        ge=0,
        description="How long after `start_at` the trial began (it reached the generator, "
        "or was built, too late to start on time); across generators, the latest.",
    )
    cores: int = 1
    peak_cpu_fraction: float = Field(
        0.0, description="The busiest single generator process's share of its core."
    )
    bytes_in: int = 0
    bytes_out: int = 0
    errors: list[str] = Field(default_factory=list, description="A sample of error messages.")
    generators: int = Field(1, description="How many generator processes this merges.")
    timeline: list[TimelineSlice] = Field(
        default_factory=list,
        description="The measured window slice by slice, in order of start (merged exactly "
        "across processes by `plimsoll.shared.timeline`).",
    )

    @property
    def cpu_fraction(self) -> float:
        """Share of the generator's cores it used: above ~85% it may be the bottleneck."""
        if self.measured_seconds <= 0:
            return 0.0
        return self.cpu_seconds / (self.measured_seconds * max(self.cores, 1))

    @property
    def achieved_rate(self) -> float:
        return self.sent / self.measured_seconds if self.measured_seconds > 0 else 0.0

    @property
    def scheduled(self) -> int:
        """Starts scheduled inside the window (the wire name is `intended`)."""
        return self.intended

    @property
    def achieved_share(self) -> float | None:
        """Sent on time ÷ scheduled: what the generator controls, so a Poisson draw that
        put fewer starts in the window than the level's mean never lowers it."""
        return self.sent_on_time / self.intended if self.intended > 0 else None


class TrialAccepted(PlimsollModel):
    id: str


class ClientIpCheck(PlimsollModel):
    """`POST /client-ips`: ask one generator whether the target honours the client-address
    header, before the first trial. The generator sends the probe, not the runner: on a
    cluster the operator's pod would otherwise call a host resolved again and never
    checked; the generator vets the address as a trial does and pins its connection to it."""

    target_url: str = Field(pattern=r"^https?://")
    client_ips: ClientIps
    refused_networks: RefusedNetworks = Field(default_factory=list, max_length=MAX_REFUSED_NETWORKS)
    tls_verify: bool = True
    timeout: float = Field(10.0, gt=0, le=60)


class ClientIpVerdict(PlimsollModel):
    """The answer: None when the target echoed each address it was sent; else what to do.
    Our own words only: never the target's answer, which may be anything it holds."""

    problem: str | None = None
