"""Per step and operation: time to first token, and the latency the target added.

The LLM-proxy question is "how much later is the first token, and how much does the
proxy add, as users grow": the step table's total latency hides both (a streamed
answer lasts as long as its tokens). Rows only for operations that measured a first
token (`ttft`) or an added latency (client time minus the upstream's Server-Timing).
"""

from __future__ import annotations

from plimsoll.api.step import StepResult
from plimsoll.shared.histogram import decode, quantile_ms

STREAMED_COLUMNS = [
    "#",
    "variant",
    "level",
    "operation",
    "TTFT p50 ms",
    "TTFT p95 ms",
    "added p50 ms",
    "added p99 ms",
]


def _ms(encoded: str | None, quantile: float) -> str:
    if encoded is None:
        return "—"
    value = quantile_ms(decode(encoded), quantile)
    return "—" if value is None else f"{value:,.1f}"


def streamed_rows(result: StepResult) -> list[list[str]]:
    client = result.client
    if client is None:
        return []
    return [
        [
            str(result.index),
            result.variant,
            f"{result.level:,}",
            name,
            _ms(op.ttft, 0.50),
            _ms(op.ttft, 0.95),
            _ms(op.added, 0.50),
            _ms(op.added, 0.99),
        ]
        for name, op in sorted(client.operations.items())
        if op.ttft is not None or op.added is not None
    ]
