"""The server side of one step: resource usage, per-unit extras and the bar's PromQL values.

Called by `plimsoll.run.step` after each trial, with the measured window. Every
source answers `usage(window)`; a Prometheus source (the Kubernetes platform's,
or the local platform's under `plimsoll run --prometheus`) also answers the
spec's `metrics.extra` (divided by the level here, where the level is known)
and the `passWhen.promql` bounds the verdict judges. Whatever cannot be read
is written down with the query that failed, so the verdict calls the step
invalid and says why; a metrics outage never crashes the run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import ResourceUsage
from plimsoll.metrics import promql
from plimsoll.metrics.source import ROLE_HOST, ROLE_TARGET, MetricsSource, ScrapedSource, Window

log = logging.getLogger(__name__)


@dataclass
class ServerSide:
    usage: dict[str, ResourceUsage] = field(default_factory=dict)
    promql: dict[str, float | None] = field(default_factory=dict)
    # The whole host's CPU where the source reads it (local): not a piece of the test,
    # so kept out of `usage` and read only to tell other programs' CPU from ours.
    host: ResourceUsage | None = None


async def _usage(metrics: MetricsSource, window: Window) -> dict[str, ResourceUsage]:
    try:
        return await metrics.usage(window)
    except Exception as exc:  # a metrics outage makes the step invalid, never the run crash
        log.warning("reading resource usage failed: %s", exc)
        return {ROLE_TARGET: ResourceUsage(source="none", missing=[f"metrics failed: {exc}"])}


def _per_unit(spec: CapacityTestSpec, target: ResourceUsage, level: int) -> None:
    for metric in spec.metrics.extra:
        if metric.name in target.extra:
            target.extra[metric.name] = promql.per_unit(target.extra[metric.name], metric, level)


async def _bounds(
    spec: CapacityTestSpec,
    metrics: MetricsSource,
    window: Window,
    usage: dict[str, ResourceUsage],
) -> dict[str, float | None]:
    bounds = spec.pass_when.promql
    if not isinstance(metrics, ScrapedSource):
        # No server to ask: the verdict reads the missing values as invalid, with the query.
        log.warning("passWhen.promql needs Prometheus (--prometheus or metrics.prometheusUrl)")
        return {}
    namespace = metrics.query_namespace()
    try:
        values, missing = await metrics.evaluate_with_reasons(bounds, window, namespace)
    except Exception as exc:  # e.g. the scrape interval could not be discovered
        values, missing = {}, [f"passWhen.promql: {exc}"]
    target = usage.get(ROLE_TARGET)
    if target is not None:
        # Shown with the step, as the role queries are: the exact text that ran.
        target.queries.extend(promql.substitute(b.query, namespace, window) for b in bounds)
        target.missing.extend(missing)
    return values


async def read_server_side(
    spec: CapacityTestSpec, metrics: MetricsSource, window: Window, level: int
) -> ServerSide:
    usage = await _usage(metrics, window)
    host = usage.pop(ROLE_HOST, None)
    target = usage.get(ROLE_TARGET)
    if target is not None and target.extra:
        _per_unit(spec, target, level)
    values = await _bounds(spec, metrics, window, usage) if spec.pass_when.promql else {}
    return ServerSide(usage, values, host)
