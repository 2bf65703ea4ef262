"""Simulated open-model trials: the generator's real pacer and schedule on a made-up clock.

Shared by the pacing property test and `bench/truth.py`. `simulate` drives
`plimsoll_generator.pacing.Pacer` (the very code that paces a real trial) with
wake-ups a little late, as a quiet host's timers are, and `result` turns its
counts into the `TrialResult` the real verdict judges.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from plimsoll.api.trial import OperationResult, Outcomes, TrialResult, TrialState
from plimsoll.api.workload import Arrival, Workload
from plimsoll.shared import histogram
from plimsoll_generator.pacing import Pacer
from plimsoll_generator.recorder import Series
from plimsoll_generator.schedule import Schedule

WARM_UP, DURATION = 2.0, 15.0
TOLERANCE: float = Workload.model_fields["late_tolerance"].default  # the default a user gets
TRIALS = 50


@dataclass
class Tally:
    intended: int = 0
    on_time: int = 0
    dropped_starts: int = 0
    start_lag: Series = field(default_factory=Series)
    sent: int = 0


def simulate(
    rate: float, seed: int, *, stall_at: float | None = None, tolerance: float = TOLERANCE
) -> Tally:
    """One trial's pacing on a simulated clock: each wake-up comes 0-2 ms late (a quiet
    host's timers), or `stall_at` seconds in, 50 ms late (a host that stalled once)."""
    tally = Tally()
    pacer = Pacer(
        Schedule(rate, Arrival.POISSON, random.Random(seed)),
        tally,
        measure_from=WARM_UP,
        horizon=WARM_UP + DURATION,
        cap=10_000,
        tolerance=tolerance,
    )
    timers = random.Random(seed + 1_000_000)
    now: float | None = 0.0
    while now is not None:
        tally.sent += sum(record for _, record in pacer.due(now, in_flight=0))
        wake = pacer.next_wake(now)
        if wake is None:
            break
        late = timers.uniform(0.0, 0.002)
        if stall_at is not None and now < stall_at <= wake:
            late = 0.050
        now = wake + late
    return tally


def result(tally: Tally, rate: float) -> TrialResult:
    answered = OperationResult(
        latency=histogram.encode(histogram.new_histogram()), outcomes=Outcomes(ok=tally.sent)
    )
    return TrialResult(
        id="sim",
        state=TrialState.DONE,
        level=rate,
        operations={"work": answered},
        nominal=rate * DURATION,
        intended=tally.intended,
        sent=tally.sent,
        sent_on_time=tally.on_time,
        late_tolerance=TOLERANCE,
        measured_seconds=DURATION,
    )
