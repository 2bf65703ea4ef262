"""What a Deployment under its autoscaler lived through in one flight (issue 57): the
figures a flight test reports, from its timeline alone.

A flight is a load profile (a base, a burst or ramp to a peak, a fall) sent at a target
whose replicas an autoscaler adds and removes. The timeline is one `FlightSlice` per
slice of the flight: the load offered and carried, the p99, how many replicas were
ready and how many the autoscaler wanted, the requests sent and failed. From it, with
the per-pod ceiling (measured in the same run, or given):

- **short of capacity**: the first slice whose offered load is more than the ready
  replicas carry at the per-pod ceiling; every lag counts from there;
- **each new pod's lag**: from short of capacity to the slice its replica count was
  first ready;
- **time to capacity**: from short of capacity to the first slice from which, to the
  flight's end or the next shortage, p99 stays within the bar and the carried load
  keeps up with the offered (`KEEPS_UP` of it);
- **seconds over the bar**: slices whose p99 was above it, failed calls counted as
  slower than any answer (so a slice where over 1% of the calls failed is over);
  **requests failed** (and their share of those sent);
- on the way down, **flaps** (the wanted count turning back up within the scale-down
  stabilization window after going down, or down after going up) and
  **over-provisioned pod-minutes** (ready replicas beyond what the offered load needs
  at the ceiling, summed over time).

The flight **held** when no slice was over the bar and the failed share stayed within
the bar's error budget. Pure: the caller measured the slices.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.autoscale import FlightResult, PodLag, ProfilePhase, ReplicaCount
from plimsoll.api.timeline import TimelineSlice
from plimsoll.shared import histogram
from plimsoll.shared.rate_profile import RateProfile

P99 = 0.99
KEEPS_UP = 0.95  # the carried load, as a share of the offered, that counts as keeping up


@dataclass(frozen=True)
class FlightSlice:
    at: float  # seconds from the flight's start
    seconds: float  # the slice's length
    offered: float  # the load asked for, in the spec's unit
    achieved: float  # the load carried
    p99_ms: float | None  # None: nothing answered in the slice
    ready: int  # replicas ready (serving) at the slice's end
    desired: int  # replicas the autoscaler wanted at the slice's end
    sent: int = 0
    failed: int = 0


def needed(offered: float, per_pod: float) -> int:
    """Replicas that carry `offered` at the per-pod ceiling."""
    return max(1, math.ceil(offered / per_pod - 1e-9))


def measure(
    slices: Sequence[FlightSlice],
    *,
    per_pod: float,
    bar_ms: float,
    max_failed_share: float,
    profile: str,
    stabilization_s: float = 300.0,
) -> FlightResult:
    """The flight's figures from its timeline (`slices` in time order); `profile` is the
    load flown, in words, for the sentence."""
    if not slices:
        raise ValueError("a flight needs at least one slice")
    if per_pod <= 0:
        raise ValueError("the per-pod ceiling must be positive")
    short = next((s for s in slices if s.offered > s.ready * per_pod), None)
    over = sum(s.seconds for s in slices if over_bar(s, bar_ms))
    sent, failed = sum(s.sent for s in slices), sum(s.failed for s in slices)
    extra = sum(max(0, s.ready - needed(s.offered, per_pod)) * s.seconds for s in slices)
    failed_share = failed / sent if sent else 0.0
    flight = FlightResult(
        profile=profile,
        short_at=short.at if short is not None else None,
        lags=_lags(slices, short),
        time_to_capacity_s=_time_to_capacity(slices, short, bar_ms),
        seconds_over_bar=over,
        sent=sent,
        failed=failed,
        flaps=_flaps(slices, stabilization_s),
        over_provisioned_pod_minutes=extra / 60,
        start_replicas=slices[0].ready,
        peak_replicas=max(s.ready for s in slices),
        held=over == 0 and failed_share <= max_failed_share,
    )
    return flight.model_copy(update={"sentence": sentence(flight)})


def over_bar(s: FlightSlice, bar_ms: float) -> bool:
    """Over the bar: the slice's p99 above it, counting each failed call as slower than
    any answer (a call that timed out waited at least the timeout). So more than 1% of
    its calls failed is over, whatever the answers' own p99: a queue past the timeout
    answers few calls, quickly, and fails the rest."""
    answered = s.achieved * s.seconds
    calls = answered + s.failed
    if calls > 0 and s.failed > (1 - P99) * calls:
        return True
    return s.p99_ms is not None and s.p99_ms > bar_ms


def _lags(slices: Sequence[FlightSlice], short: FlightSlice | None) -> list[PodLag]:
    """Each replica count first ready after the shortage, with its lag."""
    if short is None:
        return []
    lags, highest = [], short.ready
    for s in slices:
        if s.at < short.at:
            continue
        for count in range(highest + 1, s.ready + 1):
            lags.append(PodLag(replicas=count, lag_s=s.at + s.seconds - short.at))
        highest = max(highest, s.ready)
    return lags


def _recovered(s: FlightSlice, bar_ms: float) -> bool:
    """The slice held the bar and carried what was offered (`KEEPS_UP` of it)."""
    within = s.p99_ms is not None and not over_bar(s, bar_ms)
    return within and s.achieved >= KEEPS_UP * s.offered


def _time_to_capacity(
    slices: Sequence[FlightSlice], short: FlightSlice | None, bar_ms: float
) -> float | None:
    """From the shortage to the first slice after which every slice is recovered."""
    if short is None:
        return 0.0
    # One pass from the end: the earliest slice of the recovered run that ends the flight.
    first: FlightSlice | None = None
    for s in reversed([s for s in slices if s.at >= short.at]):
        if not _recovered(s, bar_ms):
            break
        first = s
    return first.at - short.at if first is not None else None


def _flaps(slices: Sequence[FlightSlice], window_s: float) -> int:
    """Turns of the wanted count (up after down, or down after up) within `window_s` of
    the previous change."""
    changes: list[tuple[float, int]] = []  # (when, +1 up or -1 down)
    for before, now in itertools.pairwise(slices):
        if now.desired != before.desired:
            changes.append((now.at, 1 if now.desired > before.desired else -1))
    return sum(
        1 for (t0, d0), (t1, d1) in itertools.pairwise(changes) if d0 != d1 and t1 - t0 < window_s
    )


def sentence(flight: FlightResult) -> str:
    """The flight in one sentence, e.g. "a burst from 200 to 1,000 rps in 10 s: 3 -> 9
    pods in 74 s; p99 over the bar for 41 s; 212 requests failed (0.4%); it did not
    hold"."""
    parts = [f"{flight.profile}: "]
    last = flight.lags[-1].lag_s if flight.lags else None
    grew = f"{flight.start_replicas} → {flight.peak_replicas} pods"
    if flight.short_at is None:
        parts[0] += f"{grew}, never short of capacity"
    elif last is None:
        parts[0] += f"{grew}; no pod was added after it ran short of capacity"
    else:
        parts[0] += f"{grew} in {last:.0f} s"
    if flight.seconds_over_bar:
        parts.append(f"p99 over the bar for {flight.seconds_over_bar:.0f} s")
    if flight.time_to_capacity_s is None and flight.short_at is not None:
        parts.append("never back within the bar")
    elif flight.short_at is not None:
        parts.append(f"back within the bar {flight.time_to_capacity_s:.0f} s after")
    plural = "s" if flight.failed != 1 else ""
    parts.append(f"{flight.failed:,} request{plural} failed ({flight.failed_share:.1%})")
    parts.append("it held" if flight.held else "it did not hold")
    return "; ".join(parts)


def slices_of(
    timeline: Sequence[TimelineSlice],
    replicas: Sequence[ReplicaCount],
    profile: RateProfile,
    level: float,
) -> list[FlightSlice]:
    """The flight's slices from the trial's timeline (sent, answered, failed, latency per
    slice) and the autoscaler's counts: the load offered in a slice is the level times
    the profile's mean share over it; the replicas are the counts at its end."""
    out = []
    for item in timeline:
        end = item.start + item.seconds
        share = (profile.area(end) - profile.area(item.start)) / item.seconds
        decoded = histogram.decode(item.latency) if item.latency else None
        counts = [c for c in replicas if c.at <= end]
        last = counts[-1] if counts else (replicas[0] if replicas else None)
        out.append(
            FlightSlice(
                at=item.start,
                seconds=item.seconds,
                offered=level * share,
                achieved=item.ok / item.seconds,
                p99_ms=histogram.quantile_ms(decoded, 0.99) if decoded is not None else None,
                ready=last.ready if last is not None else 0,
                desired=last.desired if last is not None else 0,
                sent=item.sent,
                failed=item.errors,
            )
        )
    return out


def profile_words(phases: Sequence[ProfilePhase], unit: str) -> str:
    """The profile in words, e.g. "200 rps for 60 s, to 1,000 in 10 s for 120 s, to 200
    at once for 30 s"."""
    words = []
    for index, phase in enumerate(phases):
        held = f" for {phase.hold:g} s" if phase.hold else ""
        if index == 0:
            words.append(f"{phase.level:,} {unit}{held}")
        else:
            how = f"in {phase.ramp:g} s" if phase.ramp else "at once"
            words.append(f"to {phase.level:,} {how}{held}")
    return ", ".join(words)
