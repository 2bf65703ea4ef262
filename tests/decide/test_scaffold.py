"""The values `plimsoll init` starts a spec from (`decide.scaffold`), on known probes."""

from __future__ import annotations

import pytest

from plimsoll.decide.scaffold import BAR_FLOOR, ProbeFigures, quantile, scaffold


def figures(latencies: list[float], seconds: float = 2.0) -> ProbeFigures:
    return ProbeFigures(latencies, failures=0, seconds=seconds, connections=4)


def test_the_search_starts_at_a_round_quarter_of_the_probed_rate() -> None:
    # 1,640 answers in 2 s: 820/s; a quarter is 205, rounded down to 200.
    made = scaffold(figures([0.004] * 1640))
    assert made.probe_rate == 820
    assert made.start == 200


@pytest.mark.parametrize(
    ("answers", "start"), [(2, 1), (20, 5), (100, 20), (4000, 1000), (3000, 500)]
)
def test_the_start_is_one_two_or_five_times_a_power_of_ten(answers: int, start: int) -> None:
    assert scaffold(figures([0.01] * answers, seconds=1.0)).start == start


def test_the_bar_is_five_times_the_probes_p99_rounded_up_to_the_millisecond() -> None:
    latencies = [0.010] * 98 + [0.0301, 0.2]  # p99 by nearest rank: the 99th, 30.1 ms
    made = scaffold(figures(latencies))
    assert made.probe_p99 == pytest.approx(0.0301)
    assert made.p99_bar == pytest.approx(0.151)
    assert made.probe_p50 == pytest.approx(0.010)


def test_a_fast_service_gets_the_floor_not_a_bar_host_noise_would_break() -> None:
    assert scaffold(figures([0.0004] * 500)).p99_bar == BAR_FLOOR


def test_no_answer_is_no_scaffold() -> None:
    with pytest.raises(ValueError, match="no successful answer"):
        scaffold(figures([]))


def test_quantile_by_nearest_rank() -> None:
    assert quantile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert quantile([1.0], 0.99) == 1.0
