"""Held streams that outlive trials: what crosses the generators' `/streams` API, and
the memory-per-stream figure the report carries.

The runner asks each generator to hold its share of the streams probe
(`POST /streams` with a `StreamsHold`), reads `GET /streams` (`StreamsHeld`)
until they are open, reads the target's memory, and asks for more; the slope of
memory over the counts held is the `StreamMemory` of the report. With
`workload.streams.holdDuringSteps` the streams stay held through every trial;
`DELETE /streams` closes them.
"""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel
from plimsoll.api.trial import MAX_REFUSED_NETWORKS, RefusedNetworks, StreamHealth
from plimsoll.api.workload import Workload


class StreamsHold(PlimsollModel):
    """Hold `count` streams of `workload.streams` open at `target_url` until released. A
    larger count opens the difference (those held stay open); a smaller one closes all
    and opens `count` afresh."""

    count: int = Field(ge=0, le=200_000)
    workload: Workload = Field(description="Its 'streams' says the kind and the paths.")
    target_url: str = Field(pattern=r"^https?://")
    refused_networks: RefusedNetworks = Field(
        default_factory=list,
        max_length=MAX_REFUSED_NETWORKS,
        description="As a trial's: the generator resolves the target's host before it "
        "opens a stream, refuses the hold if any address is in one of these CIDRs, and "
        "connects every stream to the address it checked.",
    )


class StreamsHeld(PlimsollModel):
    """A generator's held streams right now."""

    requested: int = 0
    open: int = Field(0, description="Held and not ended at this moment.")
    health: StreamHealth = Field(default_factory=StreamHealth)
    errors: list[str] = Field(default_factory=list)


class StreamMemory(PlimsollModel):
    """Memory per held stream of one variant: the slope of the target's working set over
    the stream counts held, with its basis and what it projects."""

    variant: str = "default"
    bytes_per_stream: float = Field(description="Least-squares slope, bytes per stream.")
    counts: list[int] = Field(description="Streams held at each reading.")
    memory_bytes: list[int] = Field(description="The target's working set at each count.")
    baseline_bytes: int | None = Field(None, description="Working set with no stream held.")
    limit_bytes: int | None = Field(None, description="The target's memory limit.")
    fit_under_limit: int | None = Field(
        None, description="Streams that fit under the limit on the fitted line (no load)."
    )
    basis: str = ""
