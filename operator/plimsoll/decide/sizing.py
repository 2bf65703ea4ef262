"""From measured costs to a deployment plan: the edge seed's sizing table, row by row.

Pure arithmetic, the derivation a capacity planner walks through by hand: plan for
peak × growth; run each pod at a target share of its ceiling; place pods so that
losing one zone still leaves enough; cap streams at the even share of the pods
left after a zone loss times a headroom, and calls in flight by Little's law
(rate × upstream latency, doubled for bursts), and check both caps fit the pod's
memory; shard the store so each single-core shard stays under half a core, and
size its memory from the keys alive at once; keep the store timeout inside the
latency budget; set the per-pod backstop above the busiest legitimate client,
who can land on one pod; sample access logs down to a budget. Every figure comes
with the line that derives it and the source of its costs, because a plan nobody
can check is not a plan.
"""

from __future__ import annotations

import math

from plimsoll.api.sizing import SizingInput, SizingLine, SizingPlan, StoreSizing

_NICE = (1.0, 2.0, 5.0)


def _n(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.3g}"


def _mib(amount: float) -> str:
    mib = amount / 2**20
    return f"{mib:,.0f} MiB" if mib >= 10 else f"{mib:.1f} MiB"


def _mb(amount: float) -> str:
    return f"{amount / 1e6:,.0f} MB"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g} ms"


def nice_up(value: float) -> float:
    """The smallest of 1, 2, 5 × 10ⁿ at or above `value`: settings people can read."""
    exponent = math.floor(math.log10(value))
    for mantissa in (*_NICE, 10.0):
        candidate = mantissa * 10.0**exponent
        if candidate >= value * (1 - 1e-12):
            return candidate
    raise AssertionError("unreachable: 10 × 10ⁿ is above any value below 10ⁿ⁺¹")


def nice_down(value: float) -> float:
    """The largest of 1, 2, 5 × 10ⁿ at or below `value`."""
    exponent = math.floor(math.log10(value))
    for mantissa in reversed(_NICE):
        candidate = mantissa * 10.0**exponent
        if candidate <= value * (1 + 1e-12):
            return candidate
    raise AssertionError("unreachable: 1 × 10ⁿ is at or below any value from 10ⁿ")


def _source(sizing: SizingInput, *names: str) -> str:
    return "; ".join(f"{n}: {sizing.sources[n]}" for n in names if n in sizing.sources)


class _Plan:
    """The plan as it is built: each step reads what the earlier ones decided."""

    def __init__(self, sizing: SizingInput) -> None:
        self.sizing = sizing
        self.lines: list[SizingLine] = []

    def line(self, item: str, derivation: str, result: str, *costs: str) -> None:
        self.lines.append(
            SizingLine(
                item=item, derivation=derivation, result=result, source=_source(self.sizing, *costs)
            )
        )


def _store_lines(built: _Plan, store: StoreSizing, load: float) -> dict[str, float | int | None]:
    sizing = built.sizing
    out: dict[str, float | int | None] = {"shards": None, "memory": None, "timeout": None}
    calls = store.calls_per_request
    if calls is not None and store.cpu_per_call is not None:
        rate = load * calls
        cores = rate * store.cpu_per_call
        shards = max(1, math.ceil(cores / store.shard_cpu))
        out["shards"] = shards
        built.line(
            f"{store.name} CPU",
            f"{_n(load)} × {calls:g} = {_n(rate)} calls/s × {store.cpu_per_call * 1e6:g} µs "
            f"= {cores:.2f} cores; one shard runs on one core, each under "
            f"{store.shard_cpu:.0%}",
            f"{shards}-shard cluster" if shards > 1 else "1 shard",
            "calls_per_request",
            "cpu_per_call",
        )
    if store.bytes_per_key is not None and store.clients_per_minute:
        keys = store.clients_per_minute * (store.key_lifetime / 60) * (1 + store.extra_keys)
        raw = keys * store.bytes_per_key
        total = raw * store.overhead
        out["memory"] = math.ceil(total)
        over = int(out["shards"] or 1)
        built.line(
            f"{store.name} memory",
            f"{_n(store.clients_per_minute)} clients/min × {store.key_lifetime / 60:g} min "
            f"key lifetime, plus {store.extra_keys:.0%} ≈ {_n(keys)} keys × "
            f"{store.bytes_per_key} B ≈ {_mb(raw)}, × {store.overhead:g} for overhead",
            f"≈ {_mb(total)} in total, {_mb(total / over)} per shard",
            "bytes_per_key",
        )
    if store.p99 is not None and sizing.latency_budget is not None:
        timeout = sizing.latency_budget / 2
        if timeout > store.p99:
            out["timeout"] = timeout
            built.line(
                f"{store.name} timeout",
                f"half the {_ms(sizing.latency_budget)} budget, above the store's "
                f"{_ms(store.p99)} p99",
                _ms(timeout),
            )
        else:
            built.line(
                f"{store.name} timeout",
                f"the store's {_ms(store.p99)} p99 is not under half the "
                f"{_ms(sizing.latency_budget)} budget",
                "none fits: raise the budget or bring the store closer",
            )
    return out


def plan(sizing: SizingInput) -> SizingPlan:
    built = _Plan(sizing)
    load = sizing.peak * sizing.growth
    usable = sizing.per_pod * sizing.utilisation
    needed = max(1, math.ceil(load / usable))
    grown = f"{_n(sizing.peak)} × {sizing.growth:g} = {_n(load)}; " if sizing.growth != 1 else ""
    built.line(
        "pods for the load",
        f"{_n(sizing.per_pod)} {sizing.unit} per pod × {sizing.utilisation:.0%} "
        f"≈ {_n(usable)} per pod; {grown}{_n(load)} ÷ {_n(usable)}",
        f"{needed} pods",
        "per_pod",
    )
    zones = sizing.zones
    if zones > 1 and sizing.survive_zone_loss:
        per_zone = math.ceil(needed / (zones - 1))
        built.line(
            "placement",
            f"losing 1 of {zones} zones must leave {needed}: ⌈{needed} ÷ {zones - 1}⌉ per zone",
            f"{per_zone * zones} pods, {per_zone} per zone",
        )
        surviving = per_zone * (zones - 1)
    else:
        per_zone = math.ceil(needed / zones)
        surviving = per_zone * zones
    pods = per_zone * zones
    per_pod_load = load / surviving

    streams_per_pod = stream_cap = None
    stream_memory = 0.0
    if sizing.streams:
        streams_per_pod = math.ceil(sizing.streams / surviving)
        stream_cap = math.ceil(streams_per_pod * sizing.stream_headroom)
        derivation = (
            f"{sizing.streams:,} streams ÷ {surviving} pods left after a zone loss = "
            f"{streams_per_pod:,} per pod, × {sizing.stream_headroom:g} headroom"
        )
        if sizing.memory_per_stream:
            stream_memory = stream_cap * sizing.memory_per_stream
            derivation += (
                f"; at the cap {stream_cap:,} × {sizing.memory_per_stream / 1024:,.1f} KiB "
                f"≈ {_mib(stream_memory)}"
            )
            if sizing.pod_memory:
                derivation += f" of the {_mib(sizing.pod_memory)} pod"
        built.line("stream cap", derivation, f"{stream_cap:,} per pod", "memory_per_stream")

    in_flight = None
    in_flight_memory = 0.0
    if sizing.upstream_latency is not None and sizing.unit == "rps":
        concurrent = per_pod_load * sizing.upstream_latency
        in_flight = math.ceil(concurrent * sizing.burst)
        derivation = (
            f"Little's law after a zone loss: {_n(per_pod_load)} rps × "
            f"{_ms(sizing.upstream_latency)} = {_n(concurrent)} concurrent, × {sizing.burst:g} "
            "for bursts"
        )
        if sizing.memory_per_in_flight:
            in_flight_memory = in_flight * sizing.memory_per_in_flight
            derivation += (
                f"; {in_flight:,} × {sizing.memory_per_in_flight / 1024:,.1f} KiB "
                f"≈ {_mib(in_flight_memory)}"
            )
        built.line("in-flight cap", derivation, f"{in_flight:,} per pod", "memory_per_in_flight")

    memory = None
    fits = None
    # Modeled users hold their memory while connected: the users a pod carries after a
    # zone loss, at the measured memory per user.
    user_memory = 0.0
    if sizing.unit == "users" and sizing.memory_per_user:
        user_memory = per_pod_load * sizing.memory_per_user
    parts = [
        (f"streams at the cap {_mib(stream_memory)}", stream_memory, "memory_per_stream"),
        (
            f"calls at the in-flight cap {_mib(in_flight_memory)}",
            in_flight_memory,
            "memory_per_in_flight",
        ),
        (
            f"{_n(per_pod_load)} users after a zone loss × "
            f"{(sizing.memory_per_user or 0) / 1024:,.1f} KiB ≈ {_mib(user_memory)}",
            user_memory,
            "memory_per_user",
        ),
    ]
    used = [(text, cost) for text, amount, cost in parts if amount]
    if used:
        memory = math.ceil(stream_memory + in_flight_memory + user_memory)
        derivation = " + ".join(text for text, _ in used)
        if len(used) > 1:
            derivation += f" = {_mib(memory)}"
        memory_costs = [cost for _, cost in used]
        if sizing.pod_memory:
            fits = memory <= sizing.pod_memory
            share = memory / sizing.pod_memory
            verdict = (
                f"fits: {share:.0%} of {_mib(sizing.pod_memory)}"
                if fits
                else f"does NOT fit: {share:.0%} of {_mib(sizing.pod_memory)}; lower the caps "
                "or give pods more memory"
            )
        else:
            verdict = f"{_mib(memory)} per pod (no pod memory to check against)"
        built.line("pod memory", derivation, verdict, *memory_costs, "pod_memory")

    store: dict[str, float | int | None] = {}
    if sizing.store is not None:
        store = _store_lines(built, sizing.store, load)

    backstop = burst = None
    if sizing.busiest_client is not None:
        wanted = sizing.busiest_client * sizing.backstop_headroom
        backstop = int(nice_up(wanted))
        burst = 2 * backstop
        built.line(
            "backstop",
            f"per pod: connections pin a client to a pod, so the busiest client's "
            f"{_n(sizing.busiest_client)}/s can land on one; × {sizing.backstop_headroom:g} "
            f"= {_n(wanted)}/s, rounded up",
            f"limit {backstop:,}/s, burst {burst:,}",
        )

    sample = None
    if sizing.log_bytes_per_request and sizing.log_budget and sizing.unit == "rps":
        volume = load * sizing.log_bytes_per_request
        sample = min(1.0, nice_down(sizing.log_budget / volume))
        built.line(
            "access log sampling",
            f"{_n(load)} rps × {sizing.log_bytes_per_request} B ≈ {_mb(volume)}/s unsampled; "
            f"the budget is {_mb(sizing.log_budget)}/s",
            f"{sample:g}",
        )

    def _int(key: str) -> int | None:
        value = store.get(key)
        return None if value is None else int(value)

    timeout = store.get("timeout")
    return SizingPlan(
        pods=pods,
        pods_per_zone=per_zone,
        pods_after_zone_loss=surviving,
        load_per_pod_after_loss=per_pod_load,
        in_flight_per_pod=in_flight,
        streams_per_pod=streams_per_pod,
        stream_cap=stream_cap,
        memory_per_pod_bytes=memory,
        fits_pod_memory=fits,
        store_shards=_int("shards"),
        store_memory_bytes=_int("memory"),
        store_timeout=None if timeout is None else float(timeout),
        backstop_per_second=backstop,
        backstop_burst=burst,
        log_sample_rate=sample,
        lines=built.lines,
    )
