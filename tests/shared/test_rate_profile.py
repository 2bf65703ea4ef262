"""A load profile's shape, its integral and the integral's inverse (issue 57), by hand
and by property: the inverse returns the time the integral reaches, on every shape."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plimsoll.api.autoscale import ProfilePhase
from plimsoll.shared.rate_profile import RateProfile, of_phases

# 10 s at 0.2, a 10 s ramp to 1.0, 20 s held, then a step back to 0.2 (held after).
BURST = RateProfile.of([(0, 0.2), (10, 0.2), (20, 1.0), (40, 1.0), (40, 0.2)])


def test_the_share_through_a_burst() -> None:
    assert BURST.share_at(5) == pytest.approx(0.2)
    assert BURST.share_at(15) == pytest.approx(0.6)
    assert BURST.share_at(30) == pytest.approx(1.0)
    assert BURST.share_at(40) == pytest.approx(0.2)  # a step takes its later share
    assert BURST.share_at(100) == pytest.approx(0.2)  # flat after the last point
    assert (BURST.seconds, BURST.peak) == (40, 1.0)


def test_the_integral_by_hand() -> None:
    assert BURST.area(10) == pytest.approx(2.0)  # 10 s x 0.2
    assert BURST.area(20) == pytest.approx(8.0)  # + 10 s x (0.2 + 1.0) / 2
    assert BURST.area(40) == pytest.approx(28.0)  # + 20 s x 1.0
    assert BURST.area(50) == pytest.approx(30.0)  # + 10 s x 0.2


def test_the_inverse_by_hand() -> None:
    assert BURST.time_of(2.0) == pytest.approx(10.0)
    # 0.2 x + 0.04 x^2 = 1 on the ramp: x = 3.5355...
    assert BURST.time_of(3.0) == pytest.approx(10 + (-0.2 + math.sqrt(0.04 + 0.16)) / 0.08)
    assert BURST.time_of(29.0) == pytest.approx(45.0)
    assert BURST.time_of(0) == 0.0


def test_a_profile_that_falls_to_nothing_never_reaches_more() -> None:
    stop = RateProfile.of([(0, 1.0), (10, 0.0)])
    assert stop.area(100) == pytest.approx(5.0)
    assert stop.time_of(5.0) == pytest.approx(10.0)
    assert stop.time_of(5.1) == math.inf


@pytest.mark.parametrize(
    ("points", "error"),
    [
        ([], "starts at 0 s"),
        ([(1, 1.0)], "starts at 0 s"),
        ([(0, 1.0), (5, 1.0), (4, 1.0)], "never go back"),
        ([(0, -1.0)], "not negative"),
    ],
)
def test_bad_shapes_are_refused(points: list[tuple[float, float]], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        RateProfile.of(points)


_gaps = st.lists(st.tuples(st.floats(0, 30), st.floats(0, 2)), min_size=1, max_size=6)


@given(_gaps, st.floats(0.01, 1.0))
def test_the_inverse_reaches_the_area_asked_on_any_shape(
    steps: list[tuple[float, float]], fraction: float
) -> None:
    times, t = [], 0.0
    for gap, share in steps:
        t += gap
        times.append((t, share))
    profile = RateProfile.of([(0, steps[0][1]), *times, (t + 10, 0.5)])
    area = fraction * profile.area(profile.seconds + 5)
    when = profile.time_of(area)
    assert profile.area(when) == pytest.approx(area, rel=1e-6, abs=1e-9)
    # and it is the first such time: a moment earlier the area was smaller
    if when > 1e-6:
        assert profile.area(when - 1e-6) <= area + 1e-9


def test_a_spec_profile_becomes_shares_of_its_peak() -> None:
    phases = [
        ProfilePhase(level=200, hold=60),
        ProfilePhase(level=1000, ramp=10, hold=120),
        ProfilePhase(level=200, hold=30),  # a step down: no ramp
    ]
    profile = of_phases(phases)
    assert profile.points == (
        (0.0, 0.2),
        (60.0, 0.2),
        (70.0, 1.0),
        (190.0, 1.0),
        (190.0, 0.2),
        (220.0, 0.2),
    )
    assert profile.seconds == 220
    with pytest.raises(ValueError, match="above 0"):
        of_phases([ProfilePhase(level=0, hold=10)])
