"""The changes the regression gate found in a history, as a Markdown section.

Shared by report.md (`plimsoll.report.markdown`), `plimsoll compare` and
`kubectl plimsoll compare`: one line per change, the run that starts it first, so a
reader sees where the ceiling moved and what image came with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.gate import Changepoint


def changepoints_markdown(points: Sequence[Changepoint], title: str = "Changepoints") -> str:
    """'## Changepoints' and a line per change; empty when there is none."""
    if not points:
        return ""
    lines = [f"## {title}", ""]
    for point in points:
        mean = f"mean {point.before:,.0f} → {point.after:,.0f}, p = {point.pvalue:.3f}"
        lines.append(f"- {point.variant}: {point.sentence} ({mean})")
    return "\n".join(lines) + "\n"
