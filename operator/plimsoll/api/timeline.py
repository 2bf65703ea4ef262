"""A trial over time: one histogram and one set of counts per time slice.

Generators cut their recording into slices (1 s by default) beside the trial's
whole histograms and send them in the `TrialResult`; the runner merges the
slices of several processes and pods by their start, exactly, as it merges the
whole histograms (`plimsoll.shared.timeline`). Each step keeps its timeline in
report.json, so a reader sees what happened during the trial, not only its sum,
and `Steadiness` says whether p99 drifted upward through it.
"""

from __future__ import annotations

from pydantic import Field

from plimsoll.api.base import PlimsollModel

DEFAULT_SLICE_SECONDS = 1.0
# The most slices one step keeps: past it, neighbours merge into slices twice as wide,
# so a day-long trial's timeline stays a few hundred kilobytes.
MAX_SLICES = 120


class TimelineSlice(PlimsollModel):
    """What completed inside [start, start + seconds) of the measured window."""

    start: float = Field(ge=0, description="Seconds from the start of the measured window.")
    seconds: float = Field(gt=0, description="The slice's width in seconds.")
    latency: str | None = Field(
        None,
        description="HdrHistogram of the latency of every operation answered in the slice, "
        "microseconds, encoded; None when nothing was answered.",
    )
    sent: int = Field(0, ge=0, description="Requests sent in the slice.")
    ok: int = Field(0, ge=0, description="Answers of the expected class completed in the slice.")
    errors: int = Field(
        0,
        ge=0,
        description="Calls that ended in the slice as errors: transport, unexpected, "
        "application or shed.",
    )
    replica_sent: list[int] = Field(
        default_factory=list,
        max_length=16,
        description="Requests sent to each replica of the target in the slice, in the order "
        "of the trial's replica URLs; empty with one replica.",
    )


class TimelinePoint(PlimsollModel):
    """One slice as the report draws it: quantiles and rates, no histogram."""

    start: float = Field(description="Seconds from the start of the measured window.")
    seconds: float = Field(description="The slice's width in seconds.")
    p50_ms: float | None = Field(None, description="Median latency in the slice, milliseconds.")
    p99_ms: float | None = Field(None, description="p99 latency in the slice, milliseconds.")
    rate: float = Field(description="Requests sent per second in the slice.")
    errors: int = Field(0, description="Errors that ended in the slice.")


class Steadiness(PlimsollModel):
    """Whether a step's p99 held level through the trial (`plimsoll.decide.steadiness`)."""

    steady: bool = Field(description="False when p99 drifted upward through the trial.")
    note: str = Field("", description="Why it is not steady, with the figures; empty if steady.")
    first_p99_ms: float | None = Field(
        None, description="Median of the slices' p99 in the first third of the trial."
    )
    last_p99_ms: float | None = Field(
        None, description="Median of the slices' p99 in the last third of the trial."
    )
