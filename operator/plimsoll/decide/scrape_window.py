"""Whether a trial's measured window is long enough for Prometheus at its scrape interval.

Pure: the runner asks it once, before the first trial, with the discovered (or the
spec's) scrape interval, and `plimsoll.metrics.promql` applies the same rule to each
window it plans. A window's mean CPU is the counters' increase between the window's
ends, so it needs samples spread across the window: at least `MIN_SCRAPES` scrape
intervals of it. A shorter window would spend a whole trial only to be judged
invalid, so the run stops up front with the exact fix instead.
"""

from __future__ import annotations

import math

from plimsoll.api.spec import Search, Strategy, Trial
from plimsoll.decide.search.probe import probe_duration

# Three intervals put three samples (or more) inside the window: the increase is read
# over two intervals of it and extrapolated over the third, a small error for the
# steady load a trial holds; two intervals could leave a single sample, and no answer.
MIN_SCRAPES = 3


def minimum_window(scrape_interval: float) -> float:
    """The shortest measured window (seconds) a scrape interval can read."""
    if scrape_interval <= 0:
        raise ValueError("the scrape interval must be positive")
    return MIN_SCRAPES * scrape_interval


def _seconds(value: float) -> str:
    return f"{value:,.0f} s" if value == round(value) else f"{value:,.3g} s"


def shortest_trial(search: Search, trial: Trial) -> tuple[float, str]:
    """The shortest measured window the search will run, and the field that sets it."""
    if search.strategy is Strategy.PROBE:
        return probe_duration(search, trial), "search.probeDuration"
    return trial.duration, "trial.duration"


def window_problem(search: Search, trial: Trial, scrape_interval: float) -> str | None:
    """None when every trial's window can be read at `scrape_interval`; else what to change."""
    window, field = shortest_trial(search, trial)
    need = minimum_window(scrape_interval)
    if window >= need:
        return None
    at = f"at a {_seconds(scrape_interval)} scrape interval"
    # Scraping more often is the other way out: at most a third of the window.
    fastest = math.floor(window / MIN_SCRAPES * 1000) / 1000
    if field == "search.probeDuration" and search.probe_duration is None:
        setting = (
            f"set search.probeDuration ≥ {_seconds(need)} (probe trials default to a fifth "
            f"of trial.duration, {_seconds(window)} here)"
        )
    else:
        setting = f"{field} ≥ {_seconds(need)} {at}"
    return (
        f"a {_seconds(window)} measured window is too short for Prometheus {at}: a window's "
        f"CPU is the counters' increase across it, which needs at least {MIN_SCRAPES} scrape "
        f"intervals. Fix: {setting}, or have Prometheus scrape the target at least every "
        f"{_seconds(fastest)} (its job's scrape_interval; metrics.scrapeInterval when set "
        "by hand)"
    )


def fitted_defaults(
    search: Search, trial: Trial, scrape_interval: float
) -> tuple[Search, Trial, list[str]]:
    """The search and trial with every length the user left to its default raised to the
    shortest window `scrape_interval` can read (a kubelet's cAdvisor refreshes about every
    10 s, so its windows need 30 s), and one note per change. Lengths the user set stay as
    written: `window_problem` refuses them when they are too short."""
    need = minimum_window(scrape_interval)
    notes: list[str] = []
    at = f"for a {_seconds(scrape_interval)} scrape interval"
    if "duration" not in trial.model_fields_set and trial.duration < need:
        notes.append(f"trial.duration {_seconds(need)} (default {_seconds(trial.duration)}) {at}")
        trial = trial.model_copy(update={"duration": need})
    if (
        search.strategy is Strategy.PROBE
        and search.probe_duration is None
        and probe_duration(search, trial) < need
    ):
        chosen = min(need, trial.duration)
        notes.append(
            f"search.probeDuration {_seconds(chosen)} (default a fifth of trial.duration, "
            f"{_seconds(probe_duration(search, trial))}) {at}"
        )
        search = search.model_copy(update={"probe_duration": chosen})
    return search, trial, notes
