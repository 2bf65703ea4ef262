"""The PromQL Plimsoll asks, and the window arithmetic behind it; pure, no I/O, no clock.

`prometheus.PrometheusSource` runs these against a server. Kept apart so the exact
queries and the evaluation times can be unit-tested, and so the report can show a
user the same text that ran.

The arithmetic, for a window [start, end] of W seconds and a scrape interval s:
- every figure is an instant query at `end` over a range of W, so it sees exactly the
  samples scraped inside the window, whatever s is;
- mean CPU is the counters' increase across the window divided by W (`increase()`
  handles counter resets and extrapolates to the window's ends), so it needs samples
  spread over the window: W ≥ 3 s (`plimsoll.decide.scrape_window`);
- peak CPU is the highest rate between consecutive scrapes (`irate`) inside it;
- memory is `avg_over_time` / `max_over_time` of the working set's samples in it;
- the server is asked only after `end + settle` (default s + 1 s), when the last
  scrape of the window has been ingested.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from plimsoll.api.spec import ExtraMetric
from plimsoll.decide.scrape_window import MIN_SCRAPES, minimum_window
from plimsoll.metrics.source import Window


class WindowTooShortError(ValueError):
    """The window holds too few scrapes for a mean at this scrape interval."""


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

    interval: float  # the scrape interval
    at: float  # the queries' time: the window's end
    span: float  # the queries' range: the whole window


def plan(window: Window, scrape_interval: float) -> Plan:
    need = minimum_window(scrape_interval)
    if window.seconds < need:
        raise WindowTooShortError(
            f"a {window.seconds:g}s window is too short for CPU at a {scrape_interval:g}s "
            f"scrape interval: it needs at least {need:g}s ({MIN_SCRAPES} scrape intervals)"
        )
    return Plan(interval=scrape_interval, at=window.end.timestamp(), span=window.seconds)


def settle_until(window: Window, settle: float) -> datetime:
    return window.end + timedelta(seconds=settle)


@dataclass(frozen=True)
class RoleQueries:
    """Instant queries at the window's end, each over the whole window."""

    cpu: str  # mean cores: the counters' increase ÷ the window
    cpu_peak: str  # cores: the highest rate between two consecutive scrapes
    memory_mean: str  # working set bytes, mean of the samples
    memory_max: str  # working set bytes, highest sample
    throttled: str  # throttled / total CFS periods over the window
    cpu_limit: str  # cores (empty: no quota)
    memory_limit: str  # bytes (empty: no limit)
    restarts: str  # restarts within the window
    oom_kills: str  # containers that restarted OOMKilled within the window


def role_queries(selector: Selector, p: Plan) -> RoleQueries:
    m = selector.matchers()
    w = duration(p.span)
    cpu = f"container_cpu_usage_seconds_total{m}"
    working_set = f"container_memory_working_set_bytes{m}"
    # irate at t reads the last two samples at or before t: starting the subquery two
    # intervals into the window keeps both samples inside it.
    peak_span = duration(max(p.span - 2 * p.interval, p.interval))
    restarts = f"kube_pod_container_status_restarts_total{m}"
    grew = f"(max_over_time({restarts}[{w}]) - min_over_time({restarts}[{w}]))"
    oom_reason = selector.matchers('reason="OOMKilled"')
    return RoleQueries(
        cpu=f"sum(increase({cpu}[{w}])) / {round(p.span, 3):g}",
        cpu_peak=(
            f"max_over_time(sum(irate({cpu}[{duration(3 * p.interval)}]))"
            f"[{peak_span}:{duration(p.interval)}])"
        ),
        memory_mean=f"sum(avg_over_time({working_set}[{w}]))",
        memory_max=f"sum(max_over_time({working_set}[{w}]))",
        throttled=(
            f"sum(increase(container_cpu_cfs_throttled_periods_total{m}[{w}]))"
            f" / sum(increase(container_cpu_cfs_periods_total{m}[{w}]))"
        ),
        # Per pod the largest quota (a restarted container's old series may linger), summed
        # over the role's pods: the CPU above sums them too, so two mock replicas at half
        # their quota each are at half, not at 100% of one pod's quota.
        cpu_limit=(
            f"sum(max by (pod) (container_spec_cpu_quota{m} / container_spec_cpu_period{m}))"
        ),
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
