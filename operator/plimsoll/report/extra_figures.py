"""report.md's table of `metrics.extra` per step: the per-unit figures the spec asked
Prometheus for (store calls per request, bytes per key), which lived only in report.json.

One row per step that read any, one column per figure, headed with its unit and what it
is per (`ExtraMetric.unit`, `.per`), so "1.55 calls per request" reads as the seeds write it.
"""

from __future__ import annotations

from plimsoll.api.report import RunReport
from plimsoll.api.spec import ExtraMetric


def extra_header(metric: ExtraMetric) -> str:
    """'valkey_calls (calls per request)', 'bytes_per_key (bytes)', or the bare name."""
    unit = metric.unit or ""
    per = f"per {metric.per}" if metric.per != "none" else ""
    said = " ".join(part for part in (unit, per) if part)
    return f"{metric.name} ({said})" if said else metric.name


def extra_table(report: RunReport) -> tuple[list[str], list[list[str]]]:
    """(columns, rows); both empty when no step read a figure."""
    metrics = list(report.spec.metrics.extra)
    names = [m.name for m in metrics]
    rows = []
    for step in report.steps:
        found = step.target.extra if step.target is not None else {}
        if not any(name in found for name in names):
            continue
        cells = [str(step.index), step.variant, f"{step.level:,}"]
        cells += [f"{found[name]:,.4g}" if name in found else "—" for name in names]
        rows.append(cells)
    if not rows:
        return [], []
    return ["step", "variant", "level", *(extra_header(m) for m in metrics)], rows
