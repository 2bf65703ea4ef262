"""Building trial requests and running them in-process for the generator's tests."""

from __future__ import annotations

import asyncio
from typing import Any

from plimsoll.api.trial import TrialRequest, TrialResult
from plimsoll.shared import histogram
from plimsoll_generator.trial import run_trial


def request(url: str, workload: dict[str, Any], **fields: Any) -> TrialRequest:
    body: dict[str, Any] = {"level": 100, "duration": 1, "targetUrl": url, "workload": workload}
    body.update(fields)
    return TrialRequest.model_validate(body)


async def run(req: TrialRequest, abort_after: float | None = None) -> TrialResult:
    abort = asyncio.Event()
    if abort_after is not None:
        asyncio.get_running_loop().call_later(abort_after, abort.set)
    return await run_trial(req, "t", abort)


def p(result: TrialResult, op: str, quantile: float) -> float:
    value = histogram.quantile_ms(histogram.decode(result.operations[op].latency), quantile)
    assert value is not None
    return value
