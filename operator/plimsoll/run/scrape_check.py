"""Before the first trial: can Prometheus read a trial's window at its scrape interval?

Called by the runner once per variant: `fit_before_start` before anything is
provisioned (default trial lengths fitted to the interval, a length set too short
refused), and `check_scrape_window` again right after the platform starts, before any
trial runs, with the target's own series.
With a Prometheus source it learns the scrape interval (the spec's
`metrics.scrapeInterval`, else discovered from the server) and asks the pure rule
in `plimsoll.decide.scrape_window` whether the shortest trial the search will run is
long enough. If not, the run stops here with the exact fix: spending a trial only to
judge it invalid would cost minutes and teach nothing. Other sources (cgroups,
/proc) sample as often as they like, so there is nothing to check.
"""

from __future__ import annotations

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.scrape_window import fitted_defaults, window_problem
from plimsoll.metrics.source import MetricsSource, PrometheusQueryError, ScrapedSource


class ScrapeWindowError(RuntimeError):
    """The trials are too short for the scrape interval, or it cannot be learnt."""


async def check_interval(spec: CapacityTestSpec, metrics: MetricsSource | None) -> float | None:
    """The scrape interval the trials will be read at (None without Prometheus)."""
    del spec  # the source holds the spec's metrics.scrapeInterval
    if not isinstance(metrics, ScrapedSource):
        return None
    try:
        return await metrics.scrape_interval()
    except PrometheusQueryError as exc:
        raise ScrapeWindowError(
            f"{exc.reason} from Prometheus at {metrics.url}: set metrics.scrapeInterval to "
            "the interval at which it scrapes the target, or check the URL"
        ) from exc


async def check_scrape_window(spec: CapacityTestSpec, metrics: MetricsSource) -> float | None:
    """The scrape interval the trials will be read at (None without Prometheus); raises
    `ScrapeWindowError` with the fix when a trial's window is too short for it."""
    interval = await check_interval(spec, metrics)
    if interval is None:
        return None
    problem = window_problem(spec.search, spec.trial, interval)
    if problem is not None:
        raise ScrapeWindowError(problem)
    return interval


async def fit_before_start(
    spec: CapacityTestSpec, metrics: MetricsSource | None
) -> tuple[CapacityTestSpec, list[str]]:
    """Before provisioning: the spec with its default trial lengths fitted to the scrape
    interval (`fitted_defaults`), and notes saying so; raises `ScrapeWindowError` when a
    length the user set is too short, so a run that cannot be read starts nothing."""
    interval = await check_interval(spec, metrics)
    if interval is None:
        return spec, []
    search, trial, notes = fitted_defaults(spec.search, spec.trial, interval)
    fitted = spec.model_copy(update={"search": search, "trial": trial})
    problem = window_problem(fitted.search, fitted.trial, interval)
    if problem is not None:
        raise ScrapeWindowError(problem)
    return fitted, notes
