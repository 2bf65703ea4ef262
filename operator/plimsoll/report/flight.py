"""A flight's section of report.md (issue 57): what the target under its autoscaler lived
through, in figures, and the replicas over time."""

from __future__ import annotations

from plimsoll.api.autoscale import FlightResult
from plimsoll.api.report import RunReport


def _seconds(value: float | None, never: str) -> str:
    return never if value is None else f"{value:.0f} s"


def flight_markdown(report: RunReport) -> str:
    """The last flight of each variant as a table and its replica counts; "" for a run
    with no flight."""
    last = {s.variant: s.flight for s in report.steps if s.flight is not None}
    sections = [_one(variant, flight, len(last) > 1) for variant, flight in last.items()]
    if not sections:
        return ""
    autoscaler = report.spec.target.autoscaler
    how = (
        f"The HPA's decisions were made by Plimsoll on this machine (simulated: the "
        f"controller's documented rules, syncing every {autoscaler.sync_period:g} s), over "
        "pinned replicas."
        if report.platform == "local" and autoscaler is not None
        else ""
    )
    return "\n".join(["## Autoscaler flight", "", *sections, how, ""])


def _one(variant: str, flight: FlightResult, named: bool) -> str:
    lags = ", ".join(f"{lag.replicas} in {lag.lag_s:.0f} s" for lag in flight.lags) or "none"
    rows = [
        ("short of capacity at", _seconds(flight.short_at, "never")),
        ("replicas serving (lag from short of capacity)", lags),
        ("time to capacity", _seconds(flight.time_to_capacity_s, "not within the flight")),
        ("p99 over the bar", f"{flight.seconds_over_bar:.0f} s"),
        ("requests failed", f"{flight.failed:,} of {flight.sent:,} ({flight.failed_share:.2%})"),
        ("replicas", f"{flight.start_replicas} → {flight.peak_replicas}"),
        ("flaps (turns within the scale-down window)", str(flight.flaps)),
        ("over-provisioned", f"{flight.over_provisioned_pod_minutes:.1f} pod-minutes"),
    ]
    counts = "; ".join(f"{c.at:.0f} s: {c.ready}/{c.desired}" for c in flight.replicas)
    return "\n".join(
        [
            f"### {variant}\n" if named else "",
            "| figure | value |",
            "| --- | --- |",
            *(f"| {name} | {value} |" for name, value in rows),
            "",
            f"Replicas serving/wanted over time: {counts}.",
            "",
        ]
    )
