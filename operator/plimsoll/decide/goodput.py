"""Goodput and attainment: how many requests were good, not only how fast the tail was.

A request is good when it was answered as expected (outcome `ok`: not a transport
failure, a shed, a wrong status or an expected application error) and kept every
latency bound of its operation. The LLM serving world reports these two figures
(vLLM's `--goodput`, guidellm, AIPerf): goodput is good requests per second,
attainment their share of all requests in the measured window.

Who calls what:

- the runner puts `request_bounds(spec.pass_when)` in every `TrialRequest`; each
  generator judges every answer against the bounds covering its operation, in its
  hot path, and counts the good ones (`OperationResult.good`);
- `figures(client)` sums them into the step's goodput and attainment, with the
  Wilson 95% interval of the share (`plimsoll.decide.confidence`), for the step
  record (`plimsoll.decide.step_summary`), so the status and the report show it;
- `criterion(client, bound)` judges `passWhen.goodput.atLeast` for the verdict.

Which latency a single request must keep. The bar's latency bounds are quantiles:
"p99 of checkout below 50 ms" promises 50 ms to (nearly) every request, while "p50
below 10 ms" describes the median and promises nothing to any one request. So for
each operation scope ('*' or one operation) and metric (total, ttft, added), the
request bound is the bound at the highest quantile (the strictest of them, if one
quantile is bounded twice). A request then keeps every bound that covers it: those
of its own operation and those of '*'. A request that did not measure a metric
(no first token, no upstream Server-Timing) is not judged on it, as the quantile
bound on that metric does not count it either. With no latency bound at all,
attainment is the share answered as expected.

This is exact where a histogram could not be: each answer is judged when it lands,
so a request over one bound and under another is counted once, and no histogram
bucket straddles a bound.

Pure: data in, figures out.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.spec import GoodputBound, PassWhen
from plimsoll.api.step import Criterion, CriterionKind
from plimsoll.api.trial import RequestBound, TrialResult
from plimsoll.decide.confidence import share_interval, share_straddles

ATTAINMENT = "attainment (requests within every bound)"


def request_bounds(bar: PassWhen) -> list[RequestBound]:
    """Per operation scope and metric, the latency bound at the highest quantile."""
    chosen: dict[tuple[str, str], tuple[float, float]] = {}
    for bound in bar.latency:
        key = (bound.operation, bound.metric)
        candidate = (bound.quantile, -bound.below)
        if key not in chosen or candidate > chosen[key]:
            chosen[key] = candidate
    return [
        RequestBound(operation=operation, metric=metric, within=-negative)
        for (operation, metric), (_, negative) in sorted(chosen.items())
    ]


@dataclass(frozen=True)
class Goodput:
    """One step's good requests: a count, a rate and a share with its interval."""

    good: int
    requests: int
    per_second: float
    attainment: float
    low: float
    high: float


def figures(client: TrialResult | None) -> Goodput | None:
    """The step's goodput, or None when no request was made or a generator did not
    judge its answers (an operation without `good`: a missing count is never zero)."""
    if client is None or not client.operations:
        return None
    if any(op.good is None for op in client.operations.values()):
        return None
    good = sum(op.good or 0 for op in client.operations.values())
    requests = sum(op.outcomes.total for op in client.operations.values())
    interval = share_interval(good, requests)
    if interval is None:
        return None
    seconds = client.measured_seconds
    return Goodput(
        good=good,
        requests=requests,
        per_second=good / seconds if seconds > 0 else 0.0,
        attainment=good / requests,
        low=interval.low,
        high=interval.high,
    )


def criterion(client: TrialResult, bound: GoodputBound) -> Criterion:
    """`passWhen.goodput`: attainment at least `atLeast`. Marginal when its interval
    straddles the bound and at least one request was not good (as an error share with
    no error is never marginal, attainment with every request good is not either)."""
    found = figures(client)
    if found is None:
        return Criterion(
            name=ATTAINMENT,
            kind=CriterionKind.GOODPUT,
            bound=bound.at_least,
            ok=False,
        )
    bad = found.requests - found.good
    return Criterion(
        name=ATTAINMENT,
        kind=CriterionKind.GOODPUT,
        measured=found.attainment,
        bound=bound.at_least,
        ok=found.attainment >= bound.at_least,
        low=found.low,
        high=found.high,
        samples=found.requests,
        marginal=share_straddles(bad, found.requests, 1.0 - bound.at_least),
    )
