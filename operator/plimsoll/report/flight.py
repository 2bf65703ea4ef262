"""A flight's section of report.md (issue 57): what the target under its autoscaler lived
through, in figures, and the replicas over time; the HPA it recommends, as a manifest,
and what the flight under that HPA showed (`autoscale.prove`)."""

from __future__ import annotations

from plimsoll.api.autoscale import FlightResult, proof_variant_name
from plimsoll.api.report import RunReport
from plimsoll.report.hpa_manifest import hpa_manifest


def _seconds(value: float | None, never: str) -> str:
    return never if value is None else f"{value:.0f} s"


def flight_markdown(report: RunReport) -> str:
    """The last flight of each variant as a table and its replica counts; "" for a run
    with no flight."""
    last = {s.variant: s.flight for s in report.steps if s.flight is not None}
    sections = [
        _one(variant, flight, len(last) > 1) + _recommended(variant, flight, last, report)
        for variant, flight in last.items()
    ]
    if not sections:
        return ""
    return "\n".join(["## Autoscaler flight", "", *sections, _how(report, last), ""])


def _how(report: RunReport, flights: dict[str, FlightResult]) -> str:
    """Who scaled: Plimsoll's simulation here, or the cluster's own HPA controller."""
    autoscaler = report.spec.target.autoscaler
    if autoscaler is None:
        return ""
    if any(flight.controller == "cluster" for flight in flights.values()):
        return (
            "The cluster's HPA controller scaled a Deployment of the target in the run's "
            "namespace; Plimsoll watched the Deployment, the HPA and the pods once a second "
            "(the CPU utilization is the HPA's own reading)."
        )
    return (
        f"The HPA's decisions were made by Plimsoll on this machine (simulated: the "
        f"controller's documented rules, syncing every {autoscaler.sync_period:g} s), over "
        "pinned replicas."
    )


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


def _recommended(
    variant: str, flight: FlightResult, flights: dict[str, FlightResult], report: RunReport
) -> str:
    """The HPA the flight recommends, and the proof flight's outcome; "" when none asked."""
    if flight.no_recommendation:
        return f"\nNo HPA recommended: {flight.no_recommendation}.\n"
    advice = flight.recommendation
    if advice is None:
        return ""
    settings = advice.autoscaler
    lines = [
        "",
        f"**Recommended HPA**: {settings.min_replicas}-{settings.max_replicas} replicas at "
        f"{settings.target_cpu_utilization}% CPU (pods held at {advice.share_of_ceiling:.0%} "
        f"of their ceiling, {advice.load_per_pod:g} per pod; a replica used "
        f"{advice.cpu_at_ceiling:.0%} of its CPU request at the ceiling and took "
        f"{advice.pod_start_s:.1f} s to serve).",
        "",
        *(f"- {reason}" for reason in advice.reasons),
        "",
        "```yaml",
        hpa_manifest(settings, report.test_name).rstrip(),
        "```",
        "",
    ]
    proof = flights.get(proof_variant_name(variant))
    if proof is not None:
        verdict = "held" if proof.held else "did not hold"
        lines += [f"Flown again under it: {verdict}. {proof.sentence}", ""]
    return "\n".join(lines)
