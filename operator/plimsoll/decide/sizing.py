"""From a measured ceiling to a deployment plan: pods, zones, in-flight and stream caps.

Pure arithmetic, the derivation a capacity planner walks through by hand: plan for
peak × growth; run each pod at a target share of its ceiling; place pods so that
losing one zone still leaves enough; size in-flight caps with Little's law
(rate × latency, doubled for bursts) and stream caps by dividing the streams
over the pods that survive a zone loss. Every figure comes with the line that
derives it, because a plan nobody can check is not a plan.
"""

from __future__ import annotations

import math

from plimsoll.api.sizing import SizingInput, SizingLine, SizingPlan


def _n(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.2g}"


def plan(sizing: SizingInput) -> SizingPlan:
    lines: list[SizingLine] = []
    load = sizing.peak * sizing.growth
    usable = sizing.per_pod * sizing.utilisation
    needed = max(1, math.ceil(load / usable))
    lines.append(
        SizingLine(
            item="pods for the load",
            derivation=(
                f"{_n(sizing.per_pod)} {sizing.unit} per pod × {sizing.utilisation:.0%} "
                f"≈ {_n(usable)} per pod; {_n(load)} ÷ {_n(usable)}"
            ),
            result=f"{needed} pods",
        )
    )
    zones = sizing.zones
    if zones > 1 and sizing.survive_zone_loss:
        per_zone = math.ceil(needed / (zones - 1))
        lines.append(
            SizingLine(
                item="placement",
                derivation=(
                    f"losing 1 of {zones} zones must leave {needed}: ⌈{needed} ÷ {zones - 1}⌉"
                ),
                result=f"{per_zone * zones} pods, {per_zone} per zone",
            )
        )
        surviving = per_zone * (zones - 1)
    else:
        per_zone = math.ceil(needed / zones)
        surviving = per_zone * zones
    pods = per_zone * zones
    per_pod_load = load / surviving

    in_flight = None
    if sizing.upstream_latency is not None and sizing.unit == "rps":
        concurrent = per_pod_load * sizing.upstream_latency
        in_flight = math.ceil(concurrent * sizing.burst)
        lines.append(
            SizingLine(
                item="in-flight cap",
                derivation=(
                    f"Little's law after a zone loss: {_n(per_pod_load)} rps × "
                    f"{sizing.upstream_latency * 1000:g} ms = {_n(concurrent)}, × {sizing.burst:g}"
                    " for bursts"
                ),
                result=f"{in_flight} per pod",
            )
        )
    streams_per_pod = None
    if sizing.streams:
        streams_per_pod = math.ceil(sizing.streams / surviving)
        lines.append(
            SizingLine(
                item="stream cap",
                derivation=f"{sizing.streams:,} streams ÷ {surviving} pods left after a zone loss",
                result=f"{streams_per_pod:,} per pod",
            )
        )
    memory = None
    parts = []
    if streams_per_pod and sizing.memory_per_stream:
        parts.append(streams_per_pod * sizing.memory_per_stream)
    if in_flight and sizing.memory_per_in_flight:
        parts.append(in_flight * sizing.memory_per_in_flight)
    if parts:
        memory = sum(parts)
        lines.append(
            SizingLine(
                item="memory for streams and calls",
                derivation="streams × memory per stream + in-flight cap × memory per call",
                result=f"{memory / 2**20:,.0f} MiB per pod",
            )
        )
    return SizingPlan(
        pods=pods,
        pods_per_zone=per_zone,
        pods_after_zone_loss=surviving,
        load_per_pod_after_loss=per_pod_load,
        in_flight_per_pod=in_flight,
        streams_per_pod=streams_per_pod,
        memory_per_pod_bytes=memory,
        lines=lines,
    )
