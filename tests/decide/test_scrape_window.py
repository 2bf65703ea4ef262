"""The rule that sizes a trial's window to the scrape interval, and the fix it names."""

from __future__ import annotations

import pytest

from plimsoll.api.spec import Search, Trial
from plimsoll.decide.scrape_window import (
    MIN_SCRAPES,
    fitted_defaults,
    minimum_window,
    window_problem,
)


def test_a_window_needs_three_scrape_intervals() -> None:
    assert MIN_SCRAPES == 3
    assert minimum_window(30) == 90
    assert minimum_window(0.5) == 1.5
    with pytest.raises(ValueError, match="positive"):
        minimum_window(0)


def test_long_enough_trials_pass_at_any_interval_up_to_a_third() -> None:
    trial = Trial(duration=60)
    assert window_problem(Search(), trial, 1) is None
    assert window_problem(Search(), trial, 20) is None
    assert window_problem(Search(), trial, 15) is None


def test_a_short_trial_names_the_duration_it_needs_and_the_interval_it_could_use() -> None:
    problem = window_problem(Search(), Trial(duration=60), 30)
    assert problem == (
        "a 60 s measured window is too short for Prometheus at a 30 s scrape interval: a "
        "window's CPU is the counters' increase across it, which needs at least 3 scrape "
        "intervals. Fix: trial.duration ≥ 90 s at a 30 s scrape interval, or have Prometheus "
        "scrape the target at least every 20 s (its job's scrape_interval; "
        "metrics.scrapeInterval when set by hand)"
    )


def test_probe_trials_are_the_shortest_and_name_their_own_field() -> None:
    probe = Search(strategy="probe")
    # Probe trials default to a fifth of trial.duration: 12 s of 60 s.
    problem = window_problem(probe, Trial(duration=60), 15)
    assert problem is not None
    assert "a 12 s measured window" in problem
    assert "set search.probeDuration ≥ 45 s (probe trials default to a fifth" in problem
    assert "at least every 4 s" in problem
    explicit = window_problem(Search(strategy="probe", probeDuration="10s"), Trial(duration=60), 5)
    assert explicit is not None
    assert "search.probeDuration ≥ 15 s at a 5 s scrape interval" in explicit
    assert "at least every 3.33 s" in explicit
    assert window_problem(Search(strategy="probe", probeDuration="15s"), Trial(), 5) is None


def test_default_lengths_are_fitted_to_the_interval_and_set_ones_are_kept() -> None:
    # A kubelet's cAdvisor refreshes every ~10 s: its windows need 30 s.
    search, trial, notes = fitted_defaults(Search(strategy="probe"), Trial(), 10)
    assert trial.duration == 60  # the default is long enough
    assert search.probe_duration == 30  # a fifth of it (12 s) was not
    assert notes == [
        "search.probeDuration 30 s (default a fifth of trial.duration, 12 s) "
        "for a 10 s scrape interval"
    ]
    search, trial, notes = fitted_defaults(Search(), Trial(), 30)
    assert trial.duration == 90
    assert notes == ["trial.duration 90 s (default 60 s) for a 30 s scrape interval"]
    # Set by the user: left as written, and refused by window_problem instead.
    search, trial, notes = fitted_defaults(Search(), Trial(duration=15), 10)
    assert (trial.duration, notes) == (15, [])
    assert window_problem(search, trial, 10) is not None
    explicit = Search(strategy="probe", probeDuration=5)
    search, _, notes = fitted_defaults(explicit, Trial(duration=60), 10)
    assert (search.probe_duration, notes) == (5, [])
