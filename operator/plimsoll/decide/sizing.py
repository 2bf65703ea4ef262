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
from dataclasses import dataclass

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


class _Lines:
    """The plan's lines as they are written, each with the source of its costs."""

    def __init__(self, sizing: SizingInput) -> None:
        self.sizing = sizing
        self.lines: list[SizingLine] = []

    def line(self, item: str, derivation: str, result: str, *costs: str) -> None:
        self.lines.append(
            SizingLine(
                item=item, derivation=derivation, result=result, source=_source(self.sizing, *costs)
            )
        )


@dataclass(frozen=True)
class _Store:
    """The store's figures: CPU and shards, memory, and the timeout that fits the budget."""

    rate: float | None = None  # calls/s
    cores: float | None = None
    shards: int | None = None
    keys: float | None = None
    raw_bytes: float | None = None
    total_bytes: float | None = None
    timeout: float | None = None  # None: none fits (or no budget or p99)


@dataclass(frozen=True)
class _Figures:
    """Every number of the plan, before a word of it is written."""

    load: float
    usable: float
    needed: int
    zones: int
    per_zone: int
    surviving: int
    per_pod_load: float
    streams_per_pod: int | None
    stream_cap: int | None
    stream_memory: float
    concurrent: float | None
    in_flight: int | None
    in_flight_memory: float
    user_memory: float
    memory: int | None
    fits: bool | None
    store: _Store | None
    wanted_backstop: float | None
    backstop: int | None
    volume: float | None
    sample: float | None

    @property
    def pods(self) -> int:
        return self.per_zone * self.zones


def _store_figures(sizing: SizingInput, store: StoreSizing, load: float) -> _Store:
    rate = cores = keys = raw = total = timeout = None
    shards = None
    if store.calls_per_request is not None and store.cpu_per_call is not None:
        rate = load * store.calls_per_request
        cores = rate * store.cpu_per_call
        shards = max(1, math.ceil(cores / store.shard_cpu))
    if store.bytes_per_key is not None and store.clients_per_minute:
        keys = store.clients_per_minute * (store.key_lifetime / 60) * (1 + store.extra_keys)
        raw = keys * store.bytes_per_key
        total = raw * store.overhead
    if store.p99 is not None and sizing.latency_budget is not None:
        half = sizing.latency_budget / 2
        timeout = half if half > store.p99 else None
    return _Store(rate, cores, shards, keys, raw, total, timeout)


def _spread(sizing: SizingInput, needed: int) -> tuple[int, int]:
    """(pods per zone, pods left after losing a zone, or all of them when none may be
    lost)."""
    zones = sizing.zones
    if zones > 1 and sizing.survive_zone_loss:
        per_zone = math.ceil(needed / (zones - 1))
        return per_zone, per_zone * (zones - 1)
    per_zone = math.ceil(needed / zones)
    return per_zone, per_zone * zones


def _streams(sizing: SizingInput, surviving: int) -> tuple[int | None, int | None, float]:
    """(streams per pod, the per-pod stream cap, the cap's memory), where streams are given."""
    if not sizing.streams:
        return None, None, 0.0
    streams_per_pod = math.ceil(sizing.streams / surviving)
    stream_cap = math.ceil(streams_per_pod * sizing.stream_headroom)
    return streams_per_pod, stream_cap, stream_cap * (sizing.memory_per_stream or 0)


def _in_flight(sizing: SizingInput, per_pod_load: float) -> tuple[float | None, int | None, float]:
    """(requests in flight per pod by Little's law, the cap with bursts, its memory), for
    a request rate with a known upstream latency."""
    if sizing.upstream_latency is None or sizing.unit != "rps":
        return None, None, 0.0
    concurrent = per_pod_load * sizing.upstream_latency
    in_flight = math.ceil(concurrent * sizing.burst)
    return concurrent, in_flight, in_flight * (sizing.memory_per_in_flight or 0)


def _backstop(sizing: SizingInput) -> tuple[float | None, int | None]:
    """(the busiest client's rate with headroom, the per-pod rate limit rounded up)."""
    if sizing.busiest_client is None:
        return None, None
    wanted = sizing.busiest_client * sizing.backstop_headroom
    return wanted, int(nice_up(wanted))


def _log_sampling(sizing: SizingInput, load: float) -> tuple[float | None, float | None]:
    """(access-log bytes per second unsampled, the sample rate that fits the budget)."""
    if not (sizing.log_bytes_per_request and sizing.log_budget and sizing.unit == "rps"):
        return None, None
    volume = load * sizing.log_bytes_per_request
    return volume, min(1.0, nice_down(sizing.log_budget / volume))


def _figures(sizing: SizingInput) -> _Figures:
    """The arithmetic of the plan, in the order a planner does it by hand."""
    load = sizing.peak * sizing.growth
    usable = sizing.per_pod * sizing.utilisation
    needed = max(1, math.ceil(load / usable))
    zones = sizing.zones
    per_zone, surviving = _spread(sizing, needed)
    per_pod_load = load / surviving
    streams_per_pod, stream_cap, stream_memory = _streams(sizing, surviving)
    concurrent, in_flight, in_flight_memory = _in_flight(sizing, per_pod_load)

    # Modeled users hold their memory while connected: the users a pod carries after a
    # zone loss, at the measured memory per user.
    user_memory = 0.0
    if sizing.unit == "users" and sizing.memory_per_user:
        user_memory = per_pod_load * sizing.memory_per_user
    memory = fits = None
    if stream_memory or in_flight_memory or user_memory:
        memory = math.ceil(stream_memory + in_flight_memory + user_memory)
        if sizing.pod_memory:
            fits = memory <= sizing.pod_memory

    wanted, backstop = _backstop(sizing)
    volume, sample = _log_sampling(sizing, load)

    return _Figures(
        load=load,
        usable=usable,
        needed=needed,
        zones=zones,
        per_zone=per_zone,
        surviving=surviving,
        per_pod_load=per_pod_load,
        streams_per_pod=streams_per_pod,
        stream_cap=stream_cap,
        stream_memory=stream_memory,
        concurrent=concurrent,
        in_flight=in_flight,
        in_flight_memory=in_flight_memory,
        user_memory=user_memory,
        memory=memory,
        fits=fits,
        store=_store_figures(sizing, sizing.store, load) if sizing.store is not None else None,
        wanted_backstop=wanted,
        backstop=backstop,
        volume=volume,
        sample=sample,
    )


def _store_prose(out: _Lines, store: StoreSizing, f: _Figures, s: _Store) -> None:
    sizing = out.sizing
    if s.shards is not None and s.rate is not None and s.cores is not None:
        calls, cpu = store.calls_per_request or 0.0, store.cpu_per_call or 0.0
        out.line(
            f"{store.name} CPU",
            f"{_n(f.load)} × {calls:g} = {_n(s.rate)} calls/s × {cpu * 1e6:g} µs "
            f"= {s.cores:.2f} cores; one shard runs on one core, each under "
            f"{store.shard_cpu:.0%}",
            f"{s.shards}-shard cluster" if s.shards > 1 else "1 shard",
            "calls_per_request",
            "cpu_per_call",
        )
    if s.keys is not None and s.raw_bytes is not None and s.total_bytes is not None:
        over = s.shards or 1
        out.line(
            f"{store.name} memory",
            f"{_n(store.clients_per_minute or 0)} clients/min × {store.key_lifetime / 60:g} "
            f"min key lifetime, plus {store.extra_keys:.0%} ≈ {_n(s.keys)} keys × "
            f"{store.bytes_per_key} B ≈ {_mb(s.raw_bytes)}, × {store.overhead:g} for overhead",
            f"≈ {_mb(s.total_bytes)} in total, {_mb(s.total_bytes / over)} per shard",
            "bytes_per_key",
        )
    if store.p99 is not None and sizing.latency_budget is not None:
        if s.timeout is not None:
            out.line(
                f"{store.name} timeout",
                f"half the {_ms(sizing.latency_budget)} budget, above the store's "
                f"{_ms(store.p99)} p99",
                _ms(s.timeout),
            )
        else:
            out.line(
                f"{store.name} timeout",
                f"the store's {_ms(store.p99)} p99 is not under half the "
                f"{_ms(sizing.latency_budget)} budget",
                "none fits: raise the budget or bring the store closer",
            )


def _memory_prose(out: _Lines, f: _Figures) -> None:
    sizing = out.sizing
    parts = [
        (f"streams at the cap {_mib(f.stream_memory)}", f.stream_memory, "memory_per_stream"),
        (
            f"calls at the in-flight cap {_mib(f.in_flight_memory)}",
            f.in_flight_memory,
            "memory_per_in_flight",
        ),
        (
            f"{_n(f.per_pod_load)} users after a zone loss × "
            f"{(sizing.memory_per_user or 0) / 1024:,.1f} KiB ≈ {_mib(f.user_memory)}",
            f.user_memory,
            "memory_per_user",
        ),
    ]
    used = [(text, cost) for text, amount, cost in parts if amount]
    if f.memory is None or not used:
        return
    derivation = " + ".join(text for text, _ in used)
    if len(used) > 1:
        derivation += f" = {_mib(f.memory)}"
    if sizing.pod_memory:
        share = f.memory / sizing.pod_memory
        verdict = (
            f"fits: {share:.0%} of {_mib(sizing.pod_memory)}"
            if f.fits
            else f"does NOT fit: {share:.0%} of {_mib(sizing.pod_memory)}; lower the caps "
            "or give pods more memory"
        )
    else:
        verdict = f"{_mib(f.memory)} per pod (no pod memory to check against)"
    out.line("pod memory", derivation, verdict, *(cost for _, cost in used), "pod_memory")


def _concurrency_prose(out: _Lines, sizing: SizingInput, f: _Figures) -> None:
    """The per-pod caps on open streams and requests in flight, where the plan has them."""
    if f.stream_cap is not None and f.streams_per_pod is not None:
        derivation = (
            f"{sizing.streams:,} streams ÷ {f.surviving} pods left after a zone loss = "
            f"{f.streams_per_pod:,} per pod, × {sizing.stream_headroom:g} headroom"
        )
        if sizing.memory_per_stream:
            derivation += (
                f"; at the cap {f.stream_cap:,} × {sizing.memory_per_stream / 1024:,.1f} KiB "
                f"≈ {_mib(f.stream_memory)}"
            )
            if sizing.pod_memory:
                derivation += f" of the {_mib(sizing.pod_memory)} pod"
        out.line("stream cap", derivation, f"{f.stream_cap:,} per pod", "memory_per_stream")
    if f.in_flight is not None and f.concurrent is not None:
        derivation = (
            f"Little's law after a zone loss: {_n(f.per_pod_load)} rps × "
            f"{_ms(sizing.upstream_latency or 0)} = {_n(f.concurrent)} concurrent, × "
            f"{sizing.burst:g} for bursts"
        )
        if sizing.memory_per_in_flight:
            derivation += (
                f"; {f.in_flight:,} × {sizing.memory_per_in_flight / 1024:,.1f} KiB "
                f"≈ {_mib(f.in_flight_memory)}"
            )
        out.line("in-flight cap", derivation, f"{f.in_flight:,} per pod", "memory_per_in_flight")


def _prose(sizing: SizingInput, f: _Figures) -> list[SizingLine]:
    """The plan's lines: each figure with the derivation a reader can check by hand."""
    out = _Lines(sizing)
    grown = f"{_n(sizing.peak)} × {sizing.growth:g} = {_n(f.load)}; " if sizing.growth != 1 else ""
    out.line(
        "pods for the load",
        f"{_n(sizing.per_pod)} {sizing.unit} per pod × {sizing.utilisation:.0%} "
        f"≈ {_n(f.usable)} per pod; {grown}{_n(f.load)} ÷ {_n(f.usable)}",
        f"{f.needed} pods",
        "per_pod",
    )
    zones = sizing.zones
    if zones > 1 and sizing.survive_zone_loss:
        out.line(
            "placement",
            f"losing 1 of {zones} zones must leave {f.needed}: ⌈{f.needed} ÷ {zones - 1}⌉ per zone",
            f"{f.per_zone * zones} pods, {f.per_zone} per zone",
        )
    _concurrency_prose(out, sizing, f)
    _memory_prose(out, f)
    if sizing.store is not None and f.store is not None:
        _store_prose(out, sizing.store, f, f.store)
    if f.backstop is not None and f.wanted_backstop is not None:
        out.line(
            "backstop",
            f"per pod: connections pin a client to a pod, so the busiest client's "
            f"{_n(sizing.busiest_client or 0)}/s can land on one; × "
            f"{sizing.backstop_headroom:g} = {_n(f.wanted_backstop)}/s, rounded up",
            f"limit {f.backstop:,}/s, burst {2 * f.backstop:,}",
        )
    if f.sample is not None and f.volume is not None:
        out.line(
            "access log sampling",
            f"{_n(f.load)} rps × {sizing.log_bytes_per_request} B ≈ {_mb(f.volume)}/s "
            f"unsampled; the budget is {_mb(sizing.log_budget or 0)}/s",
            f"{f.sample:g}",
        )
    return out.lines


def plan_deployment(sizing: SizingInput) -> SizingPlan:
    """The deployment plan for `sizing`: the figures (`_figures`), then the words
    (`_prose`) that derive each one."""
    f = _figures(sizing)
    store = f.store or _Store()
    return SizingPlan(
        pods=f.pods,
        pods_per_zone=f.per_zone,
        pods_after_zone_loss=f.surviving,
        load_per_pod_after_loss=f.per_pod_load,
        in_flight_per_pod=f.in_flight,
        streams_per_pod=f.streams_per_pod,
        stream_cap=f.stream_cap,
        memory_per_pod_bytes=f.memory,
        fits_pod_memory=f.fits,
        store_shards=store.shards,
        store_memory_bytes=None if store.total_bytes is None else math.ceil(store.total_bytes),
        store_timeout=store.timeout,
        backstop_per_second=f.backstop,
        backstop_burst=None if f.backstop is None else 2 * f.backstop,
        log_sample_rate=f.sample,
        lines=_prose(sizing, f),
    )
