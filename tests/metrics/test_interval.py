"""The scrape interval as the samples show it: the median gap, and an exact series selector."""

from __future__ import annotations

from plimsoll.metrics.interval import labels_selector, median_spacing


def test_the_median_gap_ignores_one_late_and_one_missed_scrape() -> None:
    assert median_spacing([0, 15, 30, 45.4, 60, 90, 105]) == 15.0
    assert median_spacing([10.0, 10.25, 10.5, 10.75]) == 0.25
    assert median_spacing([0, 30]) is None  # one gap is not enough to trust
    assert median_spacing([]) is None


def test_a_series_is_selected_by_all_its_labels_quoted() -> None:
    assert labels_selector({"pod": "a", "container": 'we"ird\\'}) == (
        '{container="we\\"ird\\\\",pod="a"}'
    )
