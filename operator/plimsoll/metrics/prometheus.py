"""Reading the roles' resources from Prometheus: the Kubernetes platform's metrics source.

The runner calls `PrometheusSource.usage(window)` after each trial; the Kubernetes
platform builds it with one `Selector` per role (namespace + pod regex), and `plimsoll
run --prometheus URL` builds it over the local exporter's labels. The queries come
from `promql`; this module runs them, waits for the last scrape, retries what may pass
(connection refused, 5xx) with a bounded backoff, and turns every failure into a
`missing` entry that names the query: an empty answer, an error, a NaN or a gap in a
series is never read as zero.

A finished window's samples are already in the TSDB, so a Prometheus that restarts
(a rollout, an OOM kill, a node drain) will answer for them once it is back: a
query that fails for a reason that may pass is retried for up to `retry_for`
seconds (`spec.metrics.retryFor`, two minutes by default) before the step is
called invalid.

Every request goes through `prometheus_http` (prometheus-api-client over a hardened
requests.Session, run off the event loop), which refuses redirects, bounds answers and
never quotes a failed answer's body; its errors are translated here into
`PrometheusQueryError`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import yaml

from plimsoll.api.spec import ExtraMetric, PromQLBound
from plimsoll.api.step import ResourceUsage
from plimsoll.api.units import parse_duration
from plimsoll.metrics import promql
from plimsoll.metrics.interval import sample_spacing as spacing_of_samples
from plimsoll.metrics.prometheus_http import PrometheusAPI, PrometheusHTTPError
from plimsoll.metrics.promql import Plan, Selector
from plimsoll.metrics.source import (
    ROLE_TARGET,
    MetricsSource,
    PrometheusQueryError,
    RestartCounter,
    RestartsUnreadableError,
    Window,
    unreadable,
)

log = logging.getLogger(__name__)


class PrometheusSource:
    def __init__(
        self,
        url: str,
        selectors: dict[str, Selector],
        *,
        scrape_interval: float | None = None,
        settle: float | None = None,
        extra: Sequence[ExtraMetric] = (),
        restarts: RestartCounter | None = None,
        beside: MetricsSource | None = None,
        attempts: int | None = None,
        backoff: float = 0.5,
        retry_for: float = 120.0,
        max_backoff: float = 5.0,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.url = url.rstrip("/")
        self.selectors = selectors
        self.extra = list(extra)
        # Restarts and OOM kills: kube-state-metrics' series when Prometheus has them,
        # else (when given) the pods' status; without either they are a missing figure.
        self._restart_counter = restarts
        # Roles Prometheus holds no series of, read by another source over the same window:
        # the local platform's whole-host CPU (`ROLE_HOST`), which tells other programs'
        # CPU from the test's own (`decide.contention`) whichever source reads the pieces.
        self.beside = beside
        self._interval = scrape_interval
        self._settle = settle
        self._attempts, self._backoff = attempts, backoff
        self._api = PrometheusAPI(self.url, timeout=timeout)
        self._retry_for, self._max_backoff = retry_for, max_backoff
        self._clock, self._sleep = clock, sleep
        # Retries are ours (bounded, visible in the reasons): the client's own are off.
        # Set when a query exhausted its retries: the rest of that call fails fast with
        # the same reason instead of retrying every query against a dead server.
        self._down: str | None = None

    async def scrape_interval(self) -> float:
        """The spec's value, else discovered: the spacing of the samples (what the
        window's queries will actually see), else the server's global scrape_interval
        from its config."""
        if self._interval is None:
            spacing = await self.sample_spacing()
            self._interval = spacing if spacing is not None else await self._configured_interval()
        return self._interval

    async def sample_spacing(self) -> float | None:
        """The interval the samples show (`plimsoll.metrics.interval`), None when no series
        has three samples yet or the server cannot be asked."""
        selector = self.selectors.get(ROLE_TARGET) or next(iter(self.selectors.values()))
        now = self._clock()

        async def at_now(query: str) -> list[dict[str, Any]]:
            return await self._query(query, at=now)

        try:
            return await spacing_of_samples(at_now, selector.matchers())
        except PrometheusQueryError:
            return None  # the config is asked next, and its failure is the one named

    async def _configured_interval(self) -> float:
        try:
            config = yaml.safe_load(await self._api.config_yaml()) or {}
            return parse_duration(config.get("global", {}).get("scrape_interval", "1m"))
        except (PrometheusHTTPError, KeyError, TypeError, ValueError, yaml.YAMLError) as exc:
            # Our own reason, or the exception's type: never the text of what answered.
            reason = exc.reason if isinstance(exc, PrometheusHTTPError) else type(exc).__name__
            raise PrometheusQueryError(
                "GET /api/v1/status/config",
                f"cannot discover the scrape interval: {reason}",
                temporary=True,
            ) from exc

    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        self._down = None
        try:
            interval = await self.scrape_interval()
            p = promql.plan(window, interval)
        except (PrometheusQueryError, promql.WindowTooShortError) as exc:
            return {role: unreadable("prometheus", str(exc)) for role in self.selectors}
        await self._wait_settled(window, interval)
        results: dict[str, ResourceUsage] = {}
        for role, selector in self.selectors.items():
            results[role] = await self._role_usage(selector, p, window)
        if ROLE_TARGET in results and self.extra:
            await self._extra(results[ROLE_TARGET], window)
        if self.beside is not None:
            for role, usage in (await self.beside.usage(window)).items():
                results.setdefault(role, usage)
        return results

    async def _wait_settled(self, window: Window, interval: float) -> None:
        settle = self._settle if self._settle is not None else interval + 1.0
        delay = promql.settle_until(window, settle).timestamp() - self._clock()
        if delay > 0:
            await self._sleep(delay)

    async def _role_usage(self, selector: Selector, p: Plan, window: Window) -> ResourceUsage:
        q = promql.role_queries(selector, p)
        u = ResourceUsage(source="prometheus")
        u.cpu_mean_cores = await self._scalar(u, q.cpu, p.at)
        # The peak only describes the mean; a window too short for two rates has none.
        u.cpu_peak_cores = await self._scalar(u, q.cpu_peak, p.at, required=False)
        mean = await self._scalar(u, q.memory_mean, p.at)
        peak = await self._scalar(u, q.memory_max, p.at)
        u.memory_mean_bytes = None if mean is None else round(mean)
        u.memory_max_bytes = None if peak is None else round(peak)
        # No quota or no limit is a fact (the series is absent), not a failure; without a
        # quota nothing is throttled, so its absent CFS series are not a failure either.
        u.cpu_limit_cores = await self._scalar(u, q.cpu_limit, p.at, required=False)
        u.throttled_ratio = await self._scalar(
            u, q.throttled, p.at, required=u.cpu_limit_cores is not None
        )
        limit = await self._scalar(u, q.memory_limit, p.at, required=False)
        u.memory_limit_bytes = None if limit is None else round(limit)
        counter = self._restart_counter
        restarts = await self._scalar(u, q.restarts, p.at, required=counter is None)
        if restarts is None and counter is not None:
            # No kube-state-metrics (a Prometheus that scrapes only cAdvisor): the OOM
            # query's `or vector(0)` would answer 0 whatever happened, so both come from
            # the pods' status instead.
            try:
                u.restarts, u.oom_kills = await counter.restarts(
                    selector.pod_regex, selector.container, window
                )
            except RestartsUnreadableError as exc:
                u.missing.append(f"restarts: {exc}")
            return u
        oom = await self._scalar(u, q.oom_kills, p.at)
        u.restarts, u.oom_kills = round(restarts or 0), round(oom or 0)
        return u

    async def _extra(self, usage: ResourceUsage, window: Window) -> None:
        namespace = self.selectors[ROLE_TARGET].namespace
        for metric in self.extra:
            query = promql.substitute(metric.query, namespace, window)
            value = await self._scalar(usage, query, window.end.timestamp(), label=metric.name)
            if value is not None:
                usage.extra[metric.name] = value

    def query_namespace(self) -> str:
        """The namespace `$namespace` stands for: the target's (every role shares it)."""
        selector = self.selectors.get(ROLE_TARGET) or next(iter(self.selectors.values()))
        return selector.namespace

    async def evaluate_with_reasons(
        self, bounds: Sequence[PromQLBound], window: Window, namespace: str
    ) -> tuple[dict[str, float | None], list[str]]:
        """passWhen.promql per step: each bound's value at the window's end (None: missing),
        and why each missing one could not be read."""
        self._down = None
        await self._wait_settled(window, await self.scrape_interval())
        sink = ResourceUsage(source="prometheus")
        values = {}
        for bound in bounds:
            query = promql.substitute(bound.query, namespace, window)
            values[bound.name] = await self._scalar(
                sink, query, window.end.timestamp(), label=bound.name
            )
        return values, sink.missing

    async def _scalar(
        self,
        usage: ResourceUsage,
        query: str,
        at: float,
        *,
        required: bool = True,
        label: str = "",
    ) -> float | None:
        usage.queries.append(query)
        what = f"{label}: " if label else ""
        try:
            result = await self._query(query, at=at)
        except PrometheusQueryError as exc:
            usage.missing.append(f"{what}{exc.reason} (query: {query})")
            return None
        if not result:
            if required:
                usage.missing.append(f"{what}no data (query: {query})")
            return None
        if len(result) > 1:
            usage.missing.append(
                f"{what}{len(result)} series where one was expected; aggregate it, e.g. "
                f"with sum() (query: {query})"
            )
            return None
        value = float(result[0]["value"][1])
        if math.isnan(value):
            usage.missing.append(f"{what}NaN, e.g. 0/0: nothing counted (query: {query})")
            return None
        return value

    async def _query(self, query: str, *, at: float) -> list[dict[str, Any]]:
        if self._down is not None:
            raise PrometheusQueryError(query, self._down, temporary=False)
        # Bounded by time (real, or slept when `sleep` is fake) and, if set, by attempts.
        started, slept, attempt = time.monotonic(), 0.0, 0
        while True:
            attempt += 1
            try:
                return await self._instant(query, at)
            except PrometheusQueryError as exc:
                delay = min(self._max_backoff, self._backoff * 2 ** (attempt - 1))
                spent = max(time.monotonic() - started, slept)
                out_of_attempts = self._attempts is not None and attempt >= self._attempts
                if not exc.temporary or out_of_attempts or spent + delay > self._retry_for:
                    if exc.temporary:
                        exc.reason += f" after {attempt} attempts over {spent:.0f} s"
                        self._down = exc.reason
                    raise
                log.info("prometheus query failed (%s); retrying in %.1f s", exc.reason, delay)
                await self._sleep(delay)
                slept += delay

    async def _instant(self, query: str, at: float) -> list[dict[str, Any]]:
        try:
            return await self._api.instant(query, at)
        except PrometheusHTTPError as exc:
            raise PrometheusQueryError(query, exc.reason, temporary=exc.temporary) from exc
