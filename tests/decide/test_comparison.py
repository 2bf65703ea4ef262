"""The comparison on report fixtures: Δ, the noise rule, common-level figures, costs, features."""

import pytest

from plimsoll.api.comparison import Band, Difference
from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepRecord, TrialKind, Verdict
from plimsoll.decide.comparison import Contender, compare, contenders_of
from plimsoll.decide.difference import band_of, difference, regressed, spanning
from tests.reportfixtures import Run, ladder, make_report


def ceiling(level: int | None, high: int | None, spread: int = 2) -> Ceiling:
    return Ceiling(
        level=level,
        unit="rps",
        low=level,
        high=high,
        spread=[level] * spread if level else [],
        complete=True,
    )


def record(level: int, verdict: Verdict, kind: TrialKind = TrialKind.FULL) -> StepRecord:
    return StepRecord(index=0, level=level, kind=kind, duration=2.0, verdict=verdict)


def test_the_band_runs_from_the_ceiling_to_the_first_failure() -> None:
    assert band_of(ceiling(400, 440)) == Band(low=400, high=440)
    assert band_of(ceiling(400, None)) == Band(low=400, high=None)  # nothing above failed
    assert band_of(ceiling(None, 25)) == Band(low=0, high=25)
    assert band_of(ceiling(None, None)) is None


def test_repeats_that_disagree_widen_the_band() -> None:
    records = [
        record(380, Verdict.FAIL),  # a repeat below the ceiling failed once
        record(480, Verdict.PASS),  # a level above the first failure passed once
        record(500, Verdict.PASS, kind=TrialKind.PROBE),  # probes are not evidence
    ]
    assert band_of(ceiling(400, 440), records) == Band(low=380, high=480)


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        (ceiling(420, 460), Difference.WITHIN_NOISE),  # overlapping bands
        (
            ceiling(440, 480),
            Difference.WITHIN_NOISE,
        ),  # touching: 440 failed in one, passed in other
        (ceiling(200, 220), Difference.LOWER),
        (ceiling(800, 880), Difference.HIGHER),
        (ceiling(None, 25), Difference.LOWER),  # passed nothing
        (ceiling(500, None), Difference.HIGHER),  # open upwards, clear of the baseline's band
    ],
)
def test_the_noise_rule(other: Ceiling, expected: Difference) -> None:
    base = ceiling(400, 440)
    assert difference(band_of(base), band_of(other)) is expected


def test_a_baseline_run_twice_spans_both_bands() -> None:
    first, again = Band(low=1000, high=1200), Band(low=1200, high=1400)
    assert spanning([first, again]) == Band(low=1000, high=1400)
    assert spanning([first, Band(low=1400, high=None)]) == Band(low=1000, high=None)
    assert spanning([first, None]) is None
    assert spanning([]) is None
    # A contender two bisection steps above one run touches the pair's span only
    # when the other run reached it.
    assert difference(first, Band(low=1400, high=1600)) is Difference.HIGHER
    assert difference(spanning([first, again]), Band(low=1400, high=1600)) is (
        Difference.WITHIN_NOISE
    )


def test_regression_needs_both_a_drop_beyond_the_threshold_and_outside_noise() -> None:
    base = ceiling(400, 440)
    for other, threshold, expected in [
        (ceiling(200, 220), 0.10, True),  # -50%, bands apart
        (ceiling(380, 400), 0.10, False),  # -5%: under the threshold (and touching)
        (ceiling(340, 370), 0.20, False),  # -15%, apart, but under a 20% threshold
        (ceiling(340, 370), 0.10, True),  # -15%, apart, over 10%
        (ceiling(None, 25), 0.10, True),  # passed nothing: -100%
        (ceiling(800, 880), 0.10, False),  # higher is never a regression
    ]:
        got = regressed(base.level, band_of(base), other.level, band_of(other), threshold)
        assert got is expected, other


def test_two_variants_side_by_side_with_delta_common_figures_and_costs() -> None:
    report = make_report(
        {
            "embedded": Run(400, 440, ladder(400, 440, 0.002), cpu_per_request_ms=2.0),
            "postgres": Run(350, 385, ladder(350, 385, 0.0025), cpu_per_request_ms=2.5),
        }
    )
    comparison = compare(contenders_of(report, report.unit_costs), report.spec.baseline_name)
    embedded, postgres = comparison.variants
    assert comparison.baseline == "embedded"
    assert (embedded.difference, embedded.delta_percent) == (Difference.BASELINE, 0.0)
    assert postgres.difference is Difference.LOWER
    assert postgres.delta_percent == pytest.approx(-12.5)
    # Both passed 25, 50, 100 and 200; their figures are compared at 200.
    assert comparison.common_level == 200
    assert postgres.at_common_level is not None
    assert postgres.at_common_level.cpu_cores == pytest.approx(0.5)
    [cost] = postgres.costs
    assert (cost.name, cost.baseline_value) == ("CPU per request", 2.0)
    assert cost.delta_percent == pytest.approx(25.0)
    assert "bands do not touch" in comparison.rule


def test_a_numeric_value_gives_the_cost_of_one_unit_of_the_feature() -> None:
    report = make_report(
        {
            "no-sensors": Run(400, 440, ladder(400, 440, 0.002), value=0, cpu_per_request_ms=2.0),
            "ten-sensors": Run(300, 330, ladder(300, 330, 0.003), value=10, cpu_per_request_ms=3.0),
        },
        value_unit="sensors",
    )
    comparison = compare(contenders_of(report, report.unit_costs))
    [feature] = comparison.variants[1].feature_costs
    assert feature.name == "CPU per request per sensor"
    assert feature.value == pytest.approx(0.1)  # (3.0 - 2.0) CPU-ms / 10 sensors
    assert feature.unit == "CPU-ms"
    assert comparison.variants[0].feature_costs == []


def test_runs_compared_across_reports_name_each_contender_by_its_run() -> None:
    old = make_report({"default": Run(400, 440, ladder(400, 440, 0.002))})
    new = make_report({"default": Run(410, 450, ladder(410, 450, 0.002))})
    comparison = compare(
        contenders_of(old, old.unit_costs, prefix="v1.0", source="old/report.json")
        + contenders_of(new, new.unit_costs, prefix="v1.1", source="new/report.json")
    )
    assert [v.name for v in comparison.variants] == ["v1.0", "v1.1"]
    assert comparison.variants[1].difference is Difference.WITHIN_NOISE
    assert comparison.variants[1].source == "new/report.json"


def test_a_baseline_that_is_not_there_or_mixed_units_are_refused() -> None:
    report = make_report({"a": Run(400, 440), "b": Run(300, 330)})
    with pytest.raises(ValueError, match="baseline 'c' is none of"):
        compare(contenders_of(report, report.unit_costs), "c")
    users = ceiling(10, 20).model_copy(update={"unit": "users"})
    mixed = [
        contenders_of(report, report.unit_costs)[0],
        Contender(name="u", ceiling=users, unit="users"),
    ]
    with pytest.raises(ValueError, match="different units"):
        compare(mixed)
