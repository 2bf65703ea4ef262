"""The interface every metrics source implements, and the window it is asked about.

The runner calls `MetricsSource.usage(window)` once per trial, after the trial ends,
with the measured part of the trial (warm-up excluded). Two kinds of source exist:
the local one (cgroups, or /proc for unpinned processes; `plimsoll.metrics.sampler`)
and Prometheus (`plimsoll.metrics.prometheus`). Both answer with one
`ResourceUsage` per role, and both follow one rule: what could not be read goes
into `ResourceUsage.missing` with the reason, never into a field as a zero, so the
verdict can call the step invalid and say why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from plimsoll.api.spec import PromQLBound
from plimsoll.api.step import ResourceUsage

ROLE_TARGET = "target"
ROLE_MOCK = "mock"
ROLE_GENERATOR = "generator"
# The whole host, where the source reads it (local): every process's CPU together.
ROLE_HOST = "host"
# Services (redis-server, postgres, ...) are keyed by their own names.


@dataclass(frozen=True)
class Window:
    """The measured part of one trial: from the end of the warm-up to the end of the trial.

    Times are timezone-aware: a naive datetime would be read as local time by one
    library and as UTC by another, and the window would silently slide by hours.
    """

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("a metrics window needs timezone-aware datetimes (use UTC)")
        if self.end <= self.start:
            raise ValueError(f"a metrics window must end after it starts: {self.start}..{self.end}")

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()

    @classmethod
    def of(cls, start: datetime, seconds: float) -> Window:
        return cls(start, start + timedelta(seconds=seconds))


class MetricsSource(Protocol):
    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        """Resources each role used over `window`, keyed by role ('target', 'mock',
        'generator', or a service's name). A role that could not be read at all is
        still present, with every figure `None` and the reasons in `missing`."""
        ...


class PrometheusQueryError(Exception):
    """A query a `ScrapedSource` could not answer: its text, why, and whether asking again
    may help."""

    def __init__(self, query: str, reason: str, *, temporary: bool) -> None:
        super().__init__(f"{reason} (query: {query})")
        self.query, self.reason, self.temporary = query, reason, temporary


@runtime_checkable
class ScrapedSource(Protocol):
    """A source whose figures are a scraper's samples (Prometheus): a trial's window must
    span its scrape interval (`plimsoll.run.scrape_check`), and it answers the spec's own
    PromQL (`passWhen.promql`). The runner asks for these by this protocol, never by the
    concrete class, so another scraped source plugs in alone."""

    url: str

    async def scrape_interval(self) -> float:
        """Seconds between its samples of the target; raises `PrometheusQueryError`."""
        ...

    def query_namespace(self) -> str:
        """The namespace its queries' `$namespace` stands for."""
        ...

    async def evaluate_with_reasons(
        self, bounds: Sequence[PromQLBound], window: Window, namespace: str
    ) -> tuple[dict[str, float | None], list[str]]:
        """Each bound's value at the window's end (None: missing), and why each is missing."""
        ...


class RestartsUnreadableError(Exception):
    """A `RestartCounter` could not read its source; the message says why."""


class RestartCounter(Protocol):
    """Restarts and OOM kills of a role's containers within a window, from somewhere other
    than Prometheus: on Kubernetes, the pods' own status (`restartCount`, `lastState`),
    which every cluster has, whereas the kube-state-metrics series may be absent."""

    async def restarts(
        self, pod_regex: str, container: str | None, window: Window
    ) -> tuple[int, int]:
        """(restarts, OOM kills) of the matching containers whose termination fell in
        `window`; raises `RestartsUnreadableError`."""
        ...


def unreadable(source: str, *reasons: str) -> ResourceUsage:
    """A usage with no figures at all, only the reasons why."""
    return ResourceUsage(source=source, missing=list(reasons))
