"""Inputs and output of sizing: from measured costs to a deployment plan.

`spec.sizing` (`SizingSpec`) holds what only the user knows: the peak, the
zones, the headroom, the busiest client, the key lifetime of the store. The
costs come from a run's report where it measured them (the per-pod ceiling,
memory per held stream, memory per call in flight, store calls per request,
bytes per key) and from the same fields of `spec.sizing` or `plimsoll size`'s
flags where it did not; `SizingInput` is the two joined, with the source of each
cost in `sources`. The plan (`SizingPlan`) goes to the terminal, `report.json`,
`report.md` and, compacted (`SizingSummary`), the resource's status.
"""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.units import Bytes, Fraction, Seconds


class StoreSizing(PlimsollModel):
    """A shared store the target calls (Redis, Valkey): its shards and memory."""

    name: str = Field("store", max_length=40, description="Shown in the plan, e.g. valkey.")
    calls_per_request: float | None = Field(
        None, ge=0, description="Store calls per request when the report has none."
    )
    calls_metric: str | None = Field(
        None, description="The metrics.extra name (per request) that measured calls per request."
    )
    cpu_per_call: Seconds | None = Field(
        None, description="Store CPU per call, e.g. 21us, when the report has none."
    )
    cpu_per_call_metric: str | None = Field(
        None, description="The metrics.extra name that measured store CPU seconds per call."
    )
    shard_cpu: Fraction = Field(0.5, description="Keep each single-core shard under this.")
    bytes_per_key: Bytes | None = Field(None, description="When the report has none.")
    bytes_per_key_metric: str | None = Field(
        None, description="The metrics.extra name that measured bytes per key."
    )
    clients_per_minute: int = Field(
        0, ge=0, description="Distinct clients (keys) per minute at the planned peak."
    )
    key_lifetime: Seconds = Field(60.0, description="How long one client's key lives.")
    extra_keys: Fraction = Field(0.0, description="More keys for other rules, e.g. 5% for login.")
    overhead: float = Field(1.5, ge=1, le=10, description="Store memory over the raw key bytes.")
    p99: Seconds | None = Field(None, description="The store's round-trip p99 in one region.")


class SizingSpec(PlimsollModel):
    """What only the user knows; the costs, where the run measured none, as fallbacks."""

    peak: float = Field(
        gt=0, le=1e12, allow_inf_nan=False, description="Expected peak load, in the test's unit."
    )
    growth: float = Field(1.0, ge=1, le=100, description="Plan for peak × growth (2 = doubling).")
    utilisation: Fraction = Field(
        0.6, gt=0, description="Share of the ceiling a pod may run at (above 0%)."
    )
    zones: int = Field(
        1,
        ge=1,
        le=10,
        description="Zones the deployment spreads over; pods are placed evenly across them.",
    )
    survive_zone_loss: bool = Field(
        True, description="Size so that the pods left after one zone is lost still carry the peak."
    )
    upstream_latency: Seconds | None = Field(
        None, description="Upstream p99: with a rate, Little's law gives calls in flight."
    )
    burst: float = Field(2.0, ge=1, le=100, description="In-flight headroom for bursts.")
    streams: int = Field(0, ge=0, description="Concurrent streams to hold across all pods.")
    stream_headroom: float = Field(
        2.0, ge=1, le=100, description="Stream cap over the even share after a zone loss."
    )
    pod_memory: Bytes | None = Field(
        None, description="Pod memory limit the caps must fit; default the target's."
    )
    latency_budget: Seconds | None = Field(
        None, description="What the target may add at p99: the store timeout stays inside it."
    )
    busiest_client: float | None = Field(
        None, gt=0, description="Requests/s of the busiest legitimate client (an office NAT)."
    )
    backstop_headroom: float = Field(2.0, ge=1, le=100, description="Backstop over that client.")
    log_bytes_per_request: Bytes | None = Field(None, description="Access log line size.")
    log_budget: Bytes | None = Field(None, description="Access log bytes per second to keep.")
    store: StoreSizing | None = None
    memory_per_stream: Bytes | None = Field(None, description="When the report has none.")
    memory_per_in_flight: Bytes | None = Field(None, description="When the report has none.")
    memory_per_user: Bytes | None = Field(None, description="When the report has none.")
    variant: str | None = Field(None, description="Whose ceiling to plan with (default baseline).")
    per_pod: float | None = Field(
        None,
        gt=0,
        le=1e12,
        allow_inf_nan=False,
        description="The per-pod ceiling a previous run measured, for a proof run "
        "(search.fromSizing) that measures none; otherwise the run's own ceiling is used.",
    )

    def zone_names(self) -> list[str]:
        """The planned zones as a proof run names them: a, b, c, ..."""
        return [chr(ord("a") + index) for index in range(self.zones)]


class SizingInput(SizingSpec):
    """`SizingSpec` with the measured ceiling and every cost resolved to one value."""

    per_pod: float = Field(gt=0, description="Measured ceiling of one pod, in the test's unit.")
    unit: str = "rps"
    sources: dict[str, str] = Field(
        default_factory=dict, description="Where each cost came from: report, flag or spec."
    )


class SizingLine(PlimsollModel):
    item: str
    derivation: str
    result: str
    source: str = Field("", description="Where the measured costs in this line came from.")


class SizingPlan(PlimsollModel):
    pods: int
    pods_per_zone: int
    pods_after_zone_loss: int
    load_per_pod_after_loss: float
    in_flight_per_pod: int | None = None
    streams_per_pod: int | None = Field(None, description="Even share after a zone loss.")
    stream_cap: int | None = Field(None, description="The share × stream headroom.")
    memory_per_pod_bytes: int | None = Field(
        None, description="Streams at the cap plus calls at the in-flight cap."
    )
    fits_pod_memory: bool | None = None
    store_shards: int | None = None
    store_memory_bytes: int | None = None
    store_timeout: float | None = Field(None, description="Seconds.")
    backstop_per_second: int | None = None
    backstop_burst: int | None = None
    log_sample_rate: float | None = None
    lines: list[SizingLine]


class SizingSummary(PlimsollModel):
    """The plan in a few numbers, for the resource's status (the lines stay in the report)."""

    pods: int = Field(description="Pods the plan needs in all.")
    pods_per_zone: int = Field(description="Pods the plan places in each zone.")
    in_flight_cap: int | None = Field(
        None,
        description="The most calls in flight one pod should admit (from the latency and the "
        "ceiling).",
    )
    stream_cap: int | None = Field(
        None, description="The most held streams one pod should admit under its memory limit."
    )
    fits_pod_memory: bool | None = Field(
        None, description="Whether the planned streams and calls fit the pod's memory."
    )
    store_shards: int | None = Field(
        None, description="Shards the store needs for the planned calls and keys."
    )
    backstop_per_second: int | None = Field(
        None, description="The rate limit in front of the deployment, per second."
    )

    @classmethod
    def of(cls, plan: SizingPlan) -> SizingSummary:
        """The plan's figures of the same name; `in_flight_cap` is its `in_flight_per_pod`."""
        same = set(cls.model_fields) - {"in_flight_cap"}
        return cls(in_flight_cap=plan.in_flight_per_pod, **plan.model_dump(include=same))
