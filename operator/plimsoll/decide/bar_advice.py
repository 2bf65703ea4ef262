"""A warning for a bar that judges no latency: a `passWhen` with no latency bound.

Pure: a `PassWhen` in, sentences out. Without a latency bound (and no PromQL bound
in its place) a level passes however slow its answers are, as long as they arrive
and few fail, so the ceiling found is that of the error budget, which a reader of
"sustains 4,000 requests/s" would not guess. `plimsoll validate` prints it, and a
run puts it in the report's warnings, beside the workload's (`workload_advice`).
"""

from __future__ import annotations

from plimsoll.api.spec import PassWhen


def bar_warnings(pass_when: PassWhen) -> list[str]:
    if pass_when.latency or pass_when.promql:
        return []
    return [
        "passWhen: no latency bound, so a level passes however slow its answers are (only "
        "the error shares and the achieved rate judge it): add one, e.g. "
        "latency: [{quantile: p99, below: 500ms}]"
    ]
