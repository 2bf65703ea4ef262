"""The PromQL Plimsoll asks, and the window arithmetic behind it; pure, no I/O, no clock.

`prometheus.PrometheusSource` runs these against a server. Kept apart so the exact
queries and the evaluation times can be unit-tested, and so the report can show a
user the same text that ran.

The arithmetic, for a window [start, end] and a scrape interval s:
- rates are taken over `R = max(4s, step + s)` with `step = s` (Grafana's
  `$__rate_interval` rule): four scrapes per rate, so one late or lost scrape does
  not leave a point without the two samples `rate()` needs;
- a rate at time t covers (t - R, t], so the first point that sees only the window is
  start + R; points sit on multiples of the step (as Grafana aligns them), so
  re-running a query gives the same points;
- totals over the whole window (throttling, restarts) are instant queries at `end`
  over a range equal to the window;
- the server is asked only after `end + settle` (default 2 s), when the last
  scrape of the window has been ingested.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from plimsoll.api.spec import ExtraMetric
from plimsoll.metrics.source import Window


class WindowTooShortError(ValueError):
    """The window holds no evaluation point at this scrape interval."""


def duration(seconds: float) -> str:
    """A PromQL duration: whole seconds where exact ('60s'), else milliseconds."""
    millis = round(seconds * 1000)
    if millis <= 0:
        raise ValueError(f"a PromQL range must be positive, got {seconds}s")
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis}ms"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Selector:
    """Which containers make up a role: the Kubernetes platform passes the namespace and
    a regex of the role's pod names; the local exporter labels its processes alike."""

    namespace: str
    pod_regex: str = ".+"
    container: str | None = None  # None: every real container (not the pause one)

    def matchers(self, *extra: str) -> str:
        parts = [f"namespace={_quote(self.namespace)}", f"pod=~{_quote(self.pod_regex)}"]
        if self.container is not None:
            parts.append(f"container={_quote(self.container)}")
        else:
            # cAdvisor also reports the pod's own cgroup (container="") and the pause
            # container; summing those would count the container twice.
            parts += ['container!=""', 'container!="POD"']
        return "{" + ",".join([*parts, *extra]) + "}"


@dataclass(frozen=True)
class Plan:
    """When and how one window is queried."""

    step: float
    rate_range: float
    rate_points: tuple[float, ...]  # evaluation times of the rate range query
    gauge_points: tuple[float, ...]  # evaluation times of the memory range query
    at: float  # the instant queries' time: the window's end
    span: float  # the instant queries' range: the whole window


def _aligned(first: float, last: float, step: float) -> tuple[float, ...]:
    lo, hi = math.ceil(round(first / step, 6)), math.floor(round(last / step, 6))
    return tuple(round(k * step, 3) for k in range(lo, hi + 1))


def plan(window: Window, scrape_interval: float) -> Plan:
    if scrape_interval <= 0:
        raise ValueError("the scrape interval must be positive")
    step = scrape_interval
    rate_range = max(4 * scrape_interval, step + scrape_interval)
    start, end = window.start.timestamp(), window.end.timestamp()
    rate_points = _aligned(start + rate_range, end, step)
    if not rate_points:
        raise WindowTooShortError(
            f"a {window.seconds:g}s window is too short for CPU rates at a "
            f"{scrape_interval:g}s scrape interval: it needs at least "
            f"{rate_range + step:g}s (the rate range {duration(rate_range)} plus one step)"
        )
    return Plan(
        step=step,
        rate_range=rate_range,
        rate_points=rate_points,
        gauge_points=_aligned(start, end, step),
        at=end,
        span=window.seconds,
    )


def at_time(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def settle_until(window: Window, settle: float) -> datetime:
    return window.end + timedelta(seconds=settle)


@dataclass(frozen=True)
class RoleQueries:
    cpu: str  # range: cores at each point
    memory: str  # range: working set bytes at each point
    throttled: str  # instant: throttled / total CFS periods over the window
    cpu_limit: str  # instant: cores (empty: no quota)
    memory_limit: str  # instant: bytes (empty: no limit)
    restarts: str  # instant: restarts within the window
    oom_kills: str  # instant: containers that restarted OOMKilled within the window


def role_queries(selector: Selector, p: Plan) -> RoleQueries:
    m = selector.matchers()
    r, w = duration(p.rate_range), duration(p.span)
    restarts = f"kube_pod_container_status_restarts_total{m}"
    grew = f"(max_over_time({restarts}[{w}]) - min_over_time({restarts}[{w}]))"
    oom_reason = selector.matchers('reason="OOMKilled"')
    return RoleQueries(
        cpu=f"sum(rate(container_cpu_usage_seconds_total{m}[{r}]))",
        memory=f"sum(container_memory_working_set_bytes{m})",
        throttled=(
            f"sum(increase(container_cpu_cfs_throttled_periods_total{m}[{w}]))"
            f" / sum(increase(container_cpu_cfs_periods_total{m}[{w}]))"
        ),
        cpu_limit=f"max(container_spec_cpu_quota{m} / container_spec_cpu_period{m})",
        memory_limit=f"max(container_spec_memory_limit_bytes{m} > 0)",
        restarts=f"sum({grew})",
        # An OOM kill shows as a restart whose last termination was OOMKilled; 'or
        # vector(0)' makes "none" an explicit answer, so empty still means unreadable.
        oom_kills=(
            f"count(({grew} > 0) and on(namespace, pod, container) "
            f"(kube_pod_container_status_last_terminated_reason{oom_reason} == 1)) or vector(0)"
        ),
    )


def substitute(query: str, namespace: str, window: Window) -> str:
    """Fill `$namespace` and `$window` in a user's PromQL (spec.metrics.extra, passWhen)."""
    return query.replace("$namespace", namespace).replace("$window", duration(window.seconds))


def per_unit(value: float, metric: ExtraMetric, level: float) -> float:
    """An extra metric divided by the step's level when the spec asks (`per`)."""
    if metric.per == "none":
        return value
    if level <= 0:
        raise ValueError(f"extra metric {metric.name!r} is per {metric.per}: level must be > 0")
    return value / level


def memory_per_stream(before_bytes: float, after_bytes: float, streams: int) -> float:
    """Bytes each held stream costs: from a streams probe (hold N idle streams)."""
    if streams <= 0:
        raise ValueError("a streams probe needs at least one stream")
    return (after_bytes - before_bytes) / streams
