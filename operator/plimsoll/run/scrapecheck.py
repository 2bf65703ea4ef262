"""Before the first trial: can Prometheus read a trial's window at its scrape interval?

Called by the runner once per variant, right after the platform starts and before
any trial runs. With a Prometheus source it learns the scrape interval (the spec's
`metrics.scrapeInterval`, else discovered from the server) and asks the pure rule
in `plimsoll.decide.scrapewindow` whether the shortest trial the search will run is
long enough. If not, the run stops here with the exact fix: spending a trial only to
judge it invalid would cost minutes and teach nothing. Other sources (cgroups,
/proc) sample as often as they like, so there is nothing to check.
"""

from __future__ import annotations

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.scrapewindow import window_problem
from plimsoll.metrics.prometheus import PrometheusQueryError, PrometheusSource
from plimsoll.metrics.source import MetricsSource


class ScrapeWindowError(RuntimeError):
    """The trials are too short for the scrape interval, or it cannot be learnt."""


async def check_scrape_window(spec: CapacityTestSpec, metrics: MetricsSource) -> float | None:
    """The scrape interval the trials will be read at (None without Prometheus); raises
    `ScrapeWindowError` with the fix when a trial's window is too short for it."""
    if not isinstance(metrics, PrometheusSource):
        return None
    try:
        interval = await metrics.scrape_interval()
    except PrometheusQueryError as exc:
        raise ScrapeWindowError(
            f"{exc.reason} from Prometheus at {metrics.url}: set metrics.scrapeInterval to "
            "the interval at which it scrapes the target, or check the URL"
        ) from exc
    problem = window_problem(spec.search, spec.trial, interval)
    if problem is not None:
        raise ScrapeWindowError(problem)
    return interval
