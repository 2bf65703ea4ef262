"""The open model's pacing, simulated: Poisson's own variance never fails the achieved share.

The generator's real `Pacer` and `Schedule` run against a simulated clock
(`bench.pacing_sim`: wake-ups a little late, as a quiet host's timers are), and each simulated
trial's counts are judged by the real verdict with a 99% bar. The achieved
share is sent-on-time ÷ scheduled, so no trial may fail; the old share (starts
sent ÷ the level's nominal count) is computed beside it to show what it did.
"""

from __future__ import annotations

import pytest

from bench.pacing_sim import TRIALS, WARM_UP, result, simulate
from plimsoll.api.spec import Generators, Noise, PassWhen
from plimsoll.api.step import Verdict
from plimsoll.decide.step_input import StepInput
from plimsoll.decide.verdict import judge
from plimsoll.shared import histogram


@pytest.mark.parametrize("rate", [20, 100, 1000])
def test_poisson_arrivals_never_fail_a_99_percent_bar(rate: int) -> None:
    bar = PassWhen(min_achieved=0.99)
    old_failures = 0
    for seed in range(TRIALS):
        tally = simulate(rate, seed)
        client = result(tally, rate)
        judgement = judge(StepInput(client=client, level=rate), bar, Noise(), Generators())
        assert judgement.verdict is Verdict.PASS, (seed, judgement.reasons)
        assert tally.on_time == tally.intended  # nothing late on a quiet clock
        old_failures += client.achieved_rate / rate < 0.99
    # The draws themselves vary as Poisson does: the old share (sent ÷ nominal) would have
    # failed a good part of these trials below 1,000/s.
    if rate <= 100:
        assert old_failures >= TRIALS // 10


def test_a_stall_longer_than_the_tolerance_makes_starts_late_and_not_achieved() -> None:
    tally = simulate(1000, seed=7, stall_at=WARM_UP + 5.0, tolerance=0.010)
    late = tally.intended - tally.on_time
    # Starts due in the stall, less the lead and the tolerance: about 35 ms of them.
    assert 20 <= late <= 60
    lag = histogram.quantile_ms(histogram.decode(tally.start_lag.encoded()), 1.0)
    assert lag is not None
    assert lag >= 40
