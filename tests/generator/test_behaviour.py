from __future__ import annotations

import math
import random
import statistics

import pytest

from plimsoll.api.workload import Users
from plimsoll_generator.behaviour import GapModel, UserBehaviour, bot_in_flight, bot_rate, is_bot


def test_bursty_gaps_have_the_seed_median_in_bursts_and_mean_overall() -> None:
    model = GapModel(median=6.0, mean=90.0)
    rng = random.Random(42)
    samples = [model.sample(rng) for _ in range(200_000)]
    in_burst = [gap for gap, inside in samples if inside]
    overall = [gap for gap, _ in samples]
    assert statistics.median(in_burst) == pytest.approx(6.0, rel=0.10)
    assert statistics.fmean(overall) == pytest.approx(90.0, rel=0.10)
    # Bursts: most gaps are short, a few long pauses carry the mean.
    assert statistics.median(overall) < 20.0


def test_first_gap_is_the_steady_state_wait_from_a_random_moment() -> None:
    """Renewal theory: from a random moment, the mean wait for the next call is
    E[G^2] / (2 E[G]), far longer than a fresh gap's median (most time is spent in
    the long pauses), and not the mean gap either."""
    model = GapModel(median=6.0, mean=90.0)
    in_burst_square = math.exp(2 * model.mu + 2 * model.sigma**2)
    pause_square = 2 * model.pause_mean**2
    second_moment = model.p_in_burst * in_burst_square + (1 - model.p_in_burst) * pause_square
    rng = random.Random(7)
    waits = [model.residual(rng) for _ in range(200_000)]
    assert statistics.fmean(waits) == pytest.approx(second_moment / (2 * 90.0), rel=0.03)
    assert statistics.fmean(waits) > 300.0  # a fresh gap's mean is 90 s


def test_first_gap_keeps_the_rate_of_calls_steady_from_the_start() -> None:
    """Users that start with `first_gap` call at 1 / meanGap from the first seconds on;
    starting with a fresh gap (inside a burst four times in five) runs far above it."""
    users = Users(burst_gap_median=6.0, mean_gap=90.0, bot_fraction=0.0, ramp=0.0)
    window, population = 60.0, 20_000
    steady = fresh = 0
    for index in range(population):
        behaviour = UserBehaviour(users, index, random.Random(index))
        for first, counter in ((behaviour.first_gap(), "steady"), (behaviour.next_gap(), "fresh")):
            due, calls = first, 0
            while due < window:
                calls += 1
                due += behaviour.next_gap()
            if counter == "steady":
                steady += calls
            else:
                fresh += calls
    expected = population * window / 90.0
    assert steady == pytest.approx(expected, rel=0.05)
    assert fresh > 2 * expected


def test_gaps_with_no_room_for_pauses_stay_in_bursts() -> None:
    model = GapModel(median=5.0, mean=5.0)
    rng = random.Random(1)
    gaps = [model.sample(rng)[0] for _ in range(1000)]
    assert all(g == pytest.approx(5.0) for g in gaps)


@pytest.mark.parametrize(("fraction", "users"), [(0.01, 10_000), (0.25, 999), (0.0, 500)])
def test_bot_fraction_is_exact_over_any_population(fraction: float, users: int) -> None:
    bots = sum(is_bot(i, fraction) for i in range(users))
    assert bots == int(users * fraction)


def test_page_views_and_relists_come_out_as_configured() -> None:
    users = Users(page_view_fraction=0.05, relist_fraction=0.1)
    behaviour = UserBehaviour(users, 3, random.Random(5))
    n = 100_000
    views = sum(behaviour.page_view() for _ in range(n))
    relists = sum(behaviour.relist() for _ in range(n))
    assert views / n == pytest.approx(0.05, rel=0.05)
    assert relists / n == pytest.approx(0.1, rel=0.05)


def test_a_bots_rate_gives_the_declared_share_of_calls() -> None:
    # The seed: 1% of users make half the calls, humans call every 90 s on average.
    seed = Users(bot_fraction=0.01, bot_share=0.5, mean_gap=90)
    per_bot = bot_rate(seed)
    assert per_bot == pytest.approx(99 / 90)  # 99 humans per bot, each at 1/90 s
    bots, humans = 10 * per_bot, 990 / 90  # 1,000 users
    assert bots / (bots + humans) == pytest.approx(0.5)
    # A quarter of the calls from 2% of the users.
    quarter = Users(bot_fraction=0.02, bot_share=0.25, mean_gap=10)
    bots, humans = 2 * bot_rate(quarter), 98 / 10
    assert bots / (bots + humans) == pytest.approx(0.25)


def test_without_a_share_or_humans_a_bot_calls_every_bot_gap() -> None:
    assert bot_rate(Users(bot_fraction=1.0, bot_gap=0.5)) == 2.0
    assert bot_rate(Users(bot_fraction=0.1, bot_share=None, bot_gap=0.25)) == 4.0


def test_a_bots_open_calls_are_bounded_by_its_rate_over_the_timeout() -> None:
    assert bot_in_flight(1.1, 60.0, 10_000) == 66
    assert bot_in_flight(0.001, 60.0, 10_000) == 1  # at least one
    assert bot_in_flight(500.0, 60.0, 10_000) == 10_000  # never past the workload's cap


def test_a_share_of_all_calls_needs_humans() -> None:
    with pytest.raises(ValueError, match="'botShare' must be below 100%"):
        Users(bot_fraction=0.5, bot_share=1.0)
