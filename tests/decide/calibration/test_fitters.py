"""The calibration fitters on draws with known parameters: they must give them back."""

from __future__ import annotations

import math
import random

import pytest

from plimsoll.decide.calibration.cohort import fit_cohort
from plimsoll.decide.calibration.gaps import Gap, burst_sizes, fit_gaps
from plimsoll.decide.calibration.latency import fit_latency
from plimsoll.decide.calibration.reservoir import Reservoir
from plimsoll.decide.calibration.responses import ResponseTally, size_buckets
from plimsoll.decide.calibration.routes import RoutePatterns, operation_name
from plimsoll_generator.behaviour import GapModel


@pytest.mark.parametrize(("median", "mean"), [(6.0, 90.0), (0.3, 4.5), (1.0, 20.0)])
def test_the_burst_mixture_comes_back_from_the_generators_own_gaps(
    median: float, mean: float
) -> None:
    rng = random.Random(11)
    model = GapModel(median, mean)
    gaps = [Gap(model.sample(rng)[0]) for _ in range(20_000)]
    fit = fit_gaps(gaps)
    assert fit.burst_gap_median == pytest.approx(median, rel=0.05)
    assert fit.mean_gap == pytest.approx(mean, rel=0.05)
    assert fit.in_burst_share == pytest.approx(0.8, abs=0.03)
    assert median < fit.threshold < model.pause_mean


def test_too_few_gaps_is_said() -> None:
    with pytest.raises(ValueError, match="too few"):
        fit_gaps([Gap(1.0)] * 5)


def test_bursts_split_at_the_threshold() -> None:
    assert burst_sizes([0, 1, 2, 10, 11, 30], threshold=5) == [3, 2, 1]


def test_bots_stand_apart_by_a_jump_or_by_a_stated_share() -> None:
    calls = {f"human{i}": 10 + i % 7 for i in range(198)} | {"bot1": 1200, "bot2": 1100}
    jump = fit_cohort(calls)
    assert jump.bots == {"bot1", "bot2"}
    assert jump.fraction == pytest.approx(0.01)
    assert jump.share == pytest.approx(2300 / sum(calls.values()))
    stated = fit_cohort(calls, stated_share=0.2)
    assert stated.bots == {"bot1"}  # the fewest clients carrying 20%
    flat = fit_cohort({f"c{i}": 10 for i in range(50)})
    assert not flat.bots
    assert "no bots" in flat.rule


def test_a_lognormal_route_fits_as_lognormal_and_a_bimodal_one_as_a_table() -> None:
    rng = random.Random(5)
    mu, sigma = math.log(1.2), (math.log(12) - math.log(1.2)) / 1.6449
    lognormal = [min(rng.lognormvariate(mu, sigma), 50.0) for _ in range(20_000)]
    fit = fit_latency(lognormal, "upstream time")
    assert fit.lognormal
    assert fit.ks_distance < 0.02
    assert fit.p50 == pytest.approx(1.2, rel=0.05)
    assert fit.p95 == pytest.approx(12, rel=0.08)
    assert fit.maximum == 50.0
    bimodal = [0.01 if rng.random() < 0.7 else 2.0 + rng.random() for _ in range(5000)]
    table = fit_latency(bimodal, "request time")
    assert not table.lognormal
    values = [v for _, v in table.table]
    assert values == sorted(values)
    assert table.table[-1][0] == 1.0


def test_sizes_become_a_few_buckets_and_errors_count_by_class() -> None:
    rng = random.Random(2)
    sizes = [
        1_048_576 + rng.randint(0, 900) if rng.random() < 0.02 else 4096 + rng.randint(0, 300)
        for _ in range(10_000)
    ]
    buckets = size_buckets([float(s) for s in sizes])
    assert len(buckets) == 2
    (small, small_share), (big, big_share) = buckets
    assert small == pytest.approx(4250, rel=0.05)
    assert small_share == pytest.approx(0.98, abs=0.01)
    assert big == pytest.approx(1_049_000, rel=0.01)
    assert big_share == pytest.approx(0.02, abs=0.01)
    tally = ResponseTally()
    for status in [200] * 90 + [500] * 6 + [502] * 1 + [404] * 2 + [504]:
        tally.add(status, 10, False)
    tally.add(200, 10, True)  # a proxy's upstream-timeout flag counts as a timeout
    errors = tally.errors()
    assert (errors.server, errors.client, errors.timeouts) == (7, 2, 2)
    assert errors.server_status == 500


def test_routes_group_ids_and_honour_user_patterns() -> None:
    auto = RoutePatterns([])
    assert auto.group("/api/items/42") == "/api/items/{id}"
    assert auto.group("/u/0b5e3a4c-1f2d-4e5f-8a9b-0c1d2e3f4a5b/x") == "/u/{id}/x"
    assert auto.group("/static/app.js") == "/static/app.js"
    user = RoutePatterns(["/shop/{sku}/reviews", "/files/*"])
    assert user.group("/shop/blue-shoe/reviews") == "/shop/{sku}/reviews"
    assert user.group("/files/a/b/c") == "/files/*"
    with pytest.raises(ValueError, match="starts with '/'"):
        RoutePatterns(["shop"])
    assert operation_name("GET", "/api/items/{id}") == "get-api-items-id"


def test_a_reservoir_stays_bounded_and_uniform() -> None:
    sample = Reservoir(1000, seed=1)
    for value in range(100_000):
        sample.add(float(value))
    assert len(sample.values) == 1000
    assert sample.seen == 100_000
    assert 40_000 < sum(sample.values) / 1000 < 60_000


def test_gaps_cut_short_by_slow_calls_count_as_bounds() -> None:
    # A user waits for its answer: a call that outlasts the gap it meant delays the next
    # one to its end (the generator's users do exactly this).
    rng = random.Random(3)
    model = GapModel(0.3, 4.5)
    slow = (math.log(0.06), (math.log(0.6) - math.log(0.06)) / 1.6449)
    gaps = []
    for _ in range(20_000):
        meant, took = model.sample(rng)[0], rng.lognormvariate(*slow)
        gaps.append(Gap(max(meant, took), censored=took >= meant))
    fit = fit_gaps(gaps)
    assert fit.burst_gap_median == pytest.approx(0.3, rel=0.05)
    assert fit.mean_gap == pytest.approx(4.5, rel=0.05)
    naive = fit_gaps([Gap(g.seconds) for g in gaps])
    assert naive.burst_gap_median > 0.3 * 1.08  # what reading the bounds as values costs


def test_a_short_log_counts_the_gaps_its_end_cut_off() -> None:
    # 200 users of the gateway seed logged for 180 s: each one's last pause is still open
    # when the log ends. The complete gaps alone are the short ones (the long pauses run
    # past the end); with the open ones as lower bounds the mean comes back.
    rng = random.Random(7)
    model = GapModel(0.3, 4.5)
    complete: list[Gap] = []
    cut: list[Gap] = []
    for _ in range(200):
        at = rng.uniform(0, 2)
        while True:
            gap = model.sample(rng)[0]
            if at + gap > 180:
                cut.append(Gap(180 - at, beyond=True))
                break
            complete.append(Gap(gap))
            at += gap
    fit = fit_gaps(complete + cut)
    assert fit.open_at_end == 200
    assert fit.mean_gap == pytest.approx(4.5, rel=0.06)
    assert fit.burst_gap_median == pytest.approx(0.3, rel=0.05)
    naive = fit_gaps(complete)
    assert naive.mean_gap < 4.5 * 0.92  # what leaving the open gaps out costs
