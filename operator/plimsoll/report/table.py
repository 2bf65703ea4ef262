"""The step table, as capacity reports print it: one row per step, the figures that decide.

Shared by the live view (rich), report.md (jinja2) and the final console
output, so every place shows the same columns computed the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.step import ResourceUsage, StepRecord, StepResult
from plimsoll.decide.replica_total import replica_total
from plimsoll.report.sentence import format_bytes

COLUMNS = [
    "#",
    "variant",
    "level",
    "kind",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "added p99 ms",
    "errors",
    "page views",
    "achieved/s",
    "goodput/s (attainment)",
    "CPU",
    "throttled",
    "memory",
    "starts nominal/scheduled/on time",
    "CPU wait",
    "generators",
    "verdict",
]

# Columns only some steps fill (added latency needs the upstream's Server-Timing, page
# views need modeled users, goodput a client result): a plain log line leaves them out
# when they are empty.
OPTIONAL_COLUMNS = frozenset({"added p99 ms", "page views", "goodput/s (attainment)"})


@dataclass(frozen=True)
class Row:
    cells: list[str]
    verdict: str
    reasons: list[str]


def _num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def row(result: StepResult, record: StepRecord) -> Row:
    """The step's row: its figures from `record`, what records leave out from `result`."""
    memory = "—" if record.memory_bytes is None else format_bytes(record.memory_bytes)
    cells = [
        str(record.index),
        record.variant,
        f"{record.level:,}",
        record.kind.value + (f" #{record.attempt}" if record.attempt > 1 else ""),
        _num(record.p50_ms),
        _num(record.p95_ms),
        _num(record.p99_ms),
        _num(record.added_p99_ms),
        "—" if record.error_rate is None else f"{record.error_rate:.2%}",
        _page_views(result),
        _num(record.achieved_rate),
        _goodput(record),
        _num(record.cpu_cores, 2),
        "—" if record.throttled_ratio is None else f"{record.throttled_ratio:.0%}",
        memory,
        _starts(record),
        _wait(result),
        "—" if record.generators is None else str(record.generators),
        record.verdict.value,
    ]
    return Row(cells, record.verdict.value, list(record.reasons))


def _page_views(result: StepResult) -> str:
    """The modeled users' page views in the window ("—" when the workload makes none)."""
    client = result.client
    return f"{client.page_views:,}" if client is not None and client.page_views else "—"


def _goodput(record: StepRecord) -> str:
    """Good requests per second, their share and its 95% interval: "95.0 (97.3%,
    96.1-98.2%)"."""
    if record.goodput is None or record.attainment is None:
        return "—"
    text = f"{record.goodput:,.1f} ({record.attainment:.1%}"
    if record.attainment_low is not None and record.attainment_high is not None:
        text += f", {record.attainment_low:.1%}-{record.attainment_high:.1%}"
    return text + ")"


def _starts(record: StepRecord) -> str:
    """Starts the level asked for, the schedule drew, and the generators sent on time."""
    if record.scheduled is None or record.sent_on_time is None or record.nominal is None:
        return "—"
    return f"{record.nominal:,.0f}/{record.scheduled:,}/{record.sent_on_time:,}"


def _wait(result: StepResult) -> str:
    """The target's CPU wait outside throttling; "busy" when the host was judged busy,
    "not the host" when its own threads or Plimsoll's equipment held the CPUs it waited for."""
    contention = result.contention
    if contention is None:
        return "—"
    share = contention.target_cpu_wait
    text = "—" if share is None else f"{share:.0%}"
    if contention.busy:
        return f"{text} busy"
    return f"{text} not the host" if contention.not_the_host else text


BESIDE_COLUMNS = ["#", "variant", "level", "process", "source", "CPU", "memory"]


def beside_rows(result: StepResult) -> list[list[str]]:
    """What the services, the mock and the generators used in one step, beside the target."""
    rows = [_beside_row(result, name, usage) for name, usage in sorted(result.others.items())]
    total = replica_total(result)
    if total is not None:
        replicas, usage = total
        rows.append(_beside_row(result, f"target, all {replicas} replicas", usage))
    return rows


def _beside_row(result: StepResult, name: str, usage: ResourceUsage) -> list[str]:
    memory = usage.memory_max_bytes
    return [
        str(result.index),
        result.variant,
        f"{result.level:,}",
        name,
        usage.source,
        _num(usage.cpu_mean_cores, 2),
        "—" if memory is None else format_bytes(memory),
    ]
