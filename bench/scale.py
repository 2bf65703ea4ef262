"""Benchmark: 100,000 modeled users of the MCP-gateway seed over several generators.

Run: `.venv/bin/python bench/scale.py [--users N]` (about four minutes at 100,000;
quote it from `quietrun`). Every user is the seed's (examples/mcp-gateway-users-per-pod.yaml):
it connects (handshake + tools/list), holds its SSE notification stream for the whole
trial, calls a slow tool in bursts (median 1.2 s, 5% over 12 s), re-lists and views a
page now and then, reconnects every ten minutes on average; 1% are bots making half
of the calls. The target is the mock itself (its MCP endpoint), so the figures are
the generators' own cost, not a gateway's.

Layout on one machine:

- `GENERATORS` generator control servers (`python -m plimsoll_generator
  --processes 1`), the users split between them exactly as the runner splits a step
  (`plimsoll.shared.load_split`);
- `MOCKS` mock processes on their own ports, every generator spreading its
  connections over all of them (`replica_urls`). One port is not enough: loopback
  connections to one address and port share one ephemeral port range (28,232 ports
  here), and 100,000 held streams need more than three times that.
- Each process holds over 12,000 sockets, so the bench raises its open-files soft
  limit to the hard one before it starts them (they inherit it), and stops, saying
  so, when the hard limit is too low for the count asked (`ulimit -Hn`).

Figures:

- `generator_kib_per_user`: the generators' summed RSS at its peak in the measured
  window, less their summed idle RSS before the trial, per user. Reference: the
  mocks' growth per user (a held stream and its calls on the other side);
- `generator_cpu_us_per_user_s`: the generators' CPU in the measured window (their own
  count, `TrialResult.cpu_seconds`) per user and per second. Reference: the mocks' CPU
  in the same window, read from /proc;
- `achieved_ratio`: tool calls started and ended in the window ÷ the calls the model
  starts and ends in that window. The model's count comes from a simulation of the same draws
  (`plimsoll_generator.behaviour`, the mock's latency sampler) with no I/O, because
  users that all connected in the last two minutes are not yet in the steady state
  of their bursts (80% of gaps are in-burst), so N / meanGap would be the wrong bar;
- `merge_ms`: merging the generators' results into one step
  (`plimsoll.shared.results.merge_results`), median of `MERGE_ROUNDS`; reference:
  decoding the same results from JSON (what the runner does before it merges).

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

from plimsoll.api.resource import load_capacity_test
from plimsoll.api.trial import (
    CONTROL_TOKEN_ENV,
    CONTROL_TOKEN_HEADER,
    TrialRequest,
    TrialResult,
    TrialState,
)
from plimsoll.api.upstream import Upstream
from plimsoll.api.workload import Workload
from plimsoll.cli.safe_yaml import load_documents
from plimsoll.shared import histogram
from plimsoll.shared.distributions import latency_sampler
from plimsoll.shared.load_split import split_request
from plimsoll.shared.results import merge_results
from plimsoll_generator.behaviour import UserBehaviour, bot_rate

ROOT = Path(__file__).resolve().parents[1]
SEED_SPEC = ROOT / "examples" / "mcp-gateway-users-per-pod.yaml"
USERS = 100_000
# Eight of each keep every process under 20,000 sockets (this container's hard
# open-files limit, which even root cannot raise here) and each mock's port under its
# 28,232 ephemeral ports, with room for the calls in flight and TIME_WAIT.
GENERATORS = 8
MOCKS = 8
SOCKET_HEADROOM = 1.2  # calls in flight and the pool's idle connections, beyond streams


@dataclass(frozen=True)
class Timing:
    """Users connect spread over `ramp` (1,250 handshakes a second at 100,000 in 80 s);
    the window opens after `warm_up`, once every user holds its stream."""

    ramp: float = 80.0
    warm_up: float = 100.0
    duration: float = 60.0


SHORT = Timing(ramp=10.0, warm_up=15.0, duration=15.0)  # --short: a smoke run
MERGE_ROUNDS = 20
CALL = "tool-call"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def raise_nofile(need: int) -> None:
    """Raise this process's open-files limit (which the generators and mocks inherit) to
    its hard limit; stop, saying so, when even that is below `need`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        sys.exit(
            f"bench/scale.py: each process here holds about {need} sockets but the hard "
            f"open-files limit is {hard}: raise it (`ulimit -Hn {need}` as root, or "
            f"LimitNOFILE=) or lower --users"
        )
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def seed_spec(timing: Timing) -> tuple[Upstream, Workload]:
    """The seed example's mock configuration and workload, the page view pointed at a
    path the mock answers (the example's /dashboard is the gateway's)."""
    documents = load_documents(SEED_SPEC, SEED_SPEC.read_text())
    spec = load_capacity_test(documents[0]).spec
    assert spec.workload.users is not None
    users = spec.workload.users.model_copy(
        update={"page_view_path": "/healthz", "ramp": timing.ramp}
    )
    workload = spec.workload.model_copy(update={"users": users, "client_ips": None})
    return spec.upstream, workload


def wait_healthy(url: str, proc: subprocess.Popen[bytes], within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not become healthy")


BENCH_TOKEN = "bench-control-token"


def start(command: list[str], port: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    with log.open("wb") as out:
        env = {**os.environ, CONTROL_TOKEN_ENV: BENCH_TOKEN}  # the generators refuse trials without
        proc = subprocess.Popen(
            [sys.executable, *command, "--port", str(port)], stdout=out, stderr=out, env=env
        )
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, proc)
    return proc, url


def rss_kib(pids: list[int]) -> int:
    return sum(psutil.Process(pid).memory_info().rss for pid in pids) // 1024


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def modeled_calls(
    workload: Workload, upstream: Upstream, users: int, seed: int, timing: Timing
) -> float:
    """Tool calls the users model starts in the measured window and ends before it closes
    (a call still open when the trial stops is cancelled with its user and not counted
    by the generator, so it is not counted here either), simulated without I/O:
    humans' bursty gaps (start to start, a call that outlasts its gap delaying the
    next), bots' steady rate, reconnects (handshake + listing) taking a call's turn,
    durations drawn from the mock's tool and listing latencies. The generator's
    distributions (`UserBehaviour`, `bot_rate`), with draws of its own."""
    config, mcp = workload.users, upstream.mcp
    assert config is not None
    assert mcp is not None
    rng = random.Random(f"sim/{seed}")
    tool = latency_sampler(mcp.tools[0].latency, rng)
    listing = latency_sampler(mcp.list_latency, rng)
    interval = 1.0 / bot_rate(config)
    opens, end = timing.warm_up, timing.warm_up + timing.duration
    counted = 0
    for index in range(users):
        behaviour = UserBehaviour(config, index, random.Random(f"sim/{seed}/{index}"))
        free = behaviour.first_delay() + listing()
        reconnect_at = free + behaviour.next_reconnect()
        if behaviour.bot:
            # A bot holds at most `bot_in_flight` calls (66 at the seed's figures, far
            # above the ~2 its rate keeps open), so its starts are never held back.
            due = free + behaviour.rng.uniform(0.0, interval)
            while due < end:
                if due >= reconnect_at:
                    reconnect_at = due + listing() + behaviour.next_reconnect()
                else:
                    busy = listing() if behaviour.relist() else 0.0
                    counted += opens <= due and due + busy + tool() <= end
                due += interval
            continue
        due = free + behaviour.first_gap()
        while due < end:
            if due >= reconnect_at:
                free = due + listing()
                reconnect_at = free + behaviour.next_reconnect()
            else:
                busy = listing() if behaviour.relist() else 0.0
                free = due + busy + min(tool(), workload.timeout)
                counted += opens <= due and free <= end
            due = max(due + behaviour.next_gap(), free)
    return float(counted)


async def run_trial(
    urls: list[str], request: TrialRequest, gen_pids: list[int]
) -> tuple[list[TrialResult], int, float]:
    """Start the trial on every generator, sample their RSS until it ends; the results,
    the peak summed RSS (KiB) inside the window, and the wall time it took."""
    parts = split_request(request, len(urls))
    headers = {CONTROL_TOKEN_HEADER: BENCH_TOKEN}
    async with httpx.AsyncClient(timeout=30.0, headers=headers) as client:
        began = time.monotonic()
        ids = []
        for url, part in zip(urls, parts, strict=True):
            answer = await client.post(f"{url}/trials", json=part.to_wire())
            answer.raise_for_status()
            ids.append(answer.json()["id"])
        peak = 0
        results: dict[str, TrialResult] = {}
        stalled: dict[str, int] = {}  # control-API polls that timed out, per generator
        while len(results) < len(urls):
            await asyncio.sleep(1.0)
            elapsed = time.monotonic() - began
            if request.warm_up <= elapsed <= request.warm_up + request.duration:
                peak = max(peak, rss_kib(gen_pids))
            for url, trial_id in zip(urls, ids, strict=True):
                if url in results:
                    continue
                try:
                    answer = await client.get(f"{url}/trials/{trial_id}")
                except httpx.TimeoutException:
                    # A generator whose loop is saturated answers its control API late
                    # (a 100,000-user ramp did); ask again on the next round.
                    stalled[url] = stalled.get(url, 0) + 1
                    continue
                got = TrialResult.model_validate_json(answer.content)
                if got.state is TrialState.DONE:
                    results[url] = got
                elif got.state in (TrialState.FAILED, TrialState.ABORTED):
                    raise RuntimeError(f"{url}: trial {got.state.value}: {got.errors[:3]}")
            if elapsed > request.warm_up + request.duration + 120:
                raise RuntimeError(f"the generators gave no result in time (stalled: {stalled})")
        if stalled:
            print(f"control-API polls that timed out after 30 s, per generator: {stalled}")
        return [results[url] for url in urls], peak, time.monotonic() - began


async def host_shares_in_window(timing: Timing) -> tuple[float, float]:
    """The host's idle and steal shares of its CPU time over the measured window: with no
    idle time left the processes queue for a core and the model is not followed."""
    await asyncio.sleep(timing.warm_up)
    before = psutil.cpu_times()
    await asyncio.sleep(timing.duration)
    after = psutil.cpu_times()
    spent = {field: getattr(after, field) - getattr(before, field) for field in after._fields}
    total = sum(spent.values()) or 1.0
    return spent["idle"] / total, spent.get("steal", 0.0) / total


async def sample_cpu_in_window(pids: list[int], timing: Timing) -> float:
    """The processes' CPU seconds over the measured window (timed from now, the start)."""
    await asyncio.sleep(timing.warm_up)
    before = cpu_seconds(pids)
    await asyncio.sleep(timing.duration)
    return cpu_seconds(pids) - before


async def measure(users: int, timing: Timing, workdir: Path) -> dict[str, object]:
    upstream, workload = seed_spec(timing)
    config_path = workdir / "mock.json"
    config_path.write_text(upstream.to_wire_json())
    mocks = [
        start(
            ["-m", "plimsoll_mock", "--config", str(config_path), "--shutdown-grace", "0"],
            free_port(),
            workdir / f"mock-{i}.log",
        )
        for i in range(MOCKS)
    ]
    generators = [
        start(
            ["-m", "plimsoll_generator", "--processes", "1"], free_port(), workdir / f"gen-{i}.log"
        )
        for i in range(GENERATORS)
    ]
    procs = [p for p, _ in mocks + generators]
    try:
        gen_pids = [p.pid for p, _ in generators]
        mock_pids = [p.pid for p, _ in mocks]
        mock_urls = [u for _, u in mocks]
        await asyncio.sleep(2.0)
        idle_gen, idle_mock = rss_kib(gen_pids), rss_kib(mock_pids)
        request = TrialRequest(
            level=users,
            duration=timing.duration,
            warm_up=timing.warm_up,
            workload=workload,
            target_url=mock_urls[0],
            replica_urls=mock_urls,
            seed=1,
        )
        host_task = asyncio.create_task(host_shares_in_window(timing))
        mock_cpu_task = asyncio.create_task(sample_cpu_in_window(mock_pids, timing))
        mock_peak_task = asyncio.create_task(peak_rss_in_window(mock_pids, timing))
        # Sampled by a task of its own, as the mocks' are: the result polls can stall.
        gen_peak_task = asyncio.create_task(peak_rss_in_window(gen_pids, timing))
        results, _, wall = await run_trial([u for _, u in generators], request, gen_pids)
        gen_peak = await gen_peak_task
        mock_cpu = await mock_cpu_task
        host_idle, host_steal = await host_task
        mock_peak = await mock_peak_task
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()

    wires = [r.to_wire_json() for r in results]
    decode_ms, merge_ms = [], []
    for _ in range(MERGE_ROUNDS):
        t0 = time.perf_counter()
        decoded = [TrialResult.model_validate_json(w) for w in wires]
        t1 = time.perf_counter()
        merged = merge_results(decoded, trial_id="merged")
        t2 = time.perf_counter()
        decode_ms.append((t1 - t0) * 1000)
        merge_ms.append((t2 - t1) * 1000)
    seconds = merged.measured_seconds
    call_op = merged.operations[CALL]
    calls = call_op.outcomes.total
    modeled = modeled_calls(workload, upstream, users, 1, timing)
    streams = merged.streams
    gen_kib = (gen_peak - idle_gen) / users
    mock_kib = (mock_peak - idle_mock) / users
    gen_cpu = merged.cpu_seconds / (users * seconds) * 1e6
    mock_cpu_us = mock_cpu / (users * timing.duration) * 1e6
    return {
        "users": users,
        "generators": GENERATORS,
        "mocks": MOCKS,
        "wall_s": round(wall, 1),
        "measured_s": round(seconds, 1),
        "streams_opened": streams.opened,
        "streams_held_at_end": streams.held_at_end,
        "streams_failed_to_open": streams.failed_to_open,
        "streams_dropped": streams.dropped,
        "requests_per_s": round(merged.sent / seconds, 1),
        "tool_calls": calls,
        "tool_calls_modeled": modeled,
        "transport_errors": sum(op.outcomes.transport for op in merged.operations.values()),
        "generator_peak_cpu_fraction": round(merged.peak_cpu_fraction, 3),
        "generator_kib_per_user": round(gen_kib, 2),
        "mock_kib_per_user": round(mock_kib, 2),
        "generator_vs_mock_memory": round(gen_kib / mock_kib, 2) if mock_kib > 0 else None,
        "generator_cpu_us_per_user_s": round(gen_cpu, 2),
        "mock_cpu_us_per_user_s": round(mock_cpu_us, 2),
        "generator_vs_mock_cpu": round(gen_cpu / mock_cpu_us, 2) if mock_cpu_us > 0 else None,
        "achieved_ratio": round(calls / modeled, 3) if modeled else None,
        "host_idle_share": round(host_idle, 3),
        "host_steal_share": round(host_steal, 3),
        "merge_ms": round(statistics.median(merge_ms), 2),
        "decode_ms": round(statistics.median(decode_ms), 2),
        "merge_vs_decode": round(statistics.median(merge_ms) / statistics.median(decode_ms), 2),
        # Where calls went missing: their latency (the model's median is 1.2 s) and classes.
        "tool_call_p50_ms": histogram.quantile_ms(histogram.decode(call_op.latency), 0.50),
        "tool_call_p99_ms": histogram.quantile_ms(histogram.decode(call_op.latency), 0.99),
        "tool_call_outcomes": call_op.outcomes.model_dump(exclude_defaults=True),
        "errors_sample": merged.errors[:5],
    }


async def peak_rss_in_window(pids: list[int], timing: Timing) -> int:
    await asyncio.sleep(timing.warm_up)
    peak, end = 0, time.monotonic() + timing.duration
    while time.monotonic() < end:
        peak = max(peak, rss_kib(pids))
        await asyncio.sleep(1.0)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=USERS)
    parser.add_argument("--short", action="store_true", help="15 s warm-up and window")
    args = parser.parse_args()
    timing = SHORT if args.short else Timing()
    raise_nofile(math.ceil(args.users / min(GENERATORS, MOCKS) * SOCKET_HEADROOM) + 256)
    with tempfile.TemporaryDirectory(prefix="plimsoll-scale-") as tmp:
        figures = asyncio.run(measure(args.users, timing, Path(tmp)))
    for key, value in figures.items():
        print(f"{key:32} {value}")
    achieved = figures["achieved_ratio"]
    if isinstance(achieved, float) and not 0.95 <= achieved <= 1.05:
        print(
            f"NOT A RESULT: {achieved:.0%} of the modeled calls were made. The host had "
            f"{figures['host_idle_share']:.0%} of its CPU idle in the window ("
            f"{figures['host_steal_share']:.0%} stolen by its hypervisor): with none idle the "
            "generators and mocks queue for a core, calls take longer than the model's, "
            "and fewer are made. Fewer --users, or more cores."
        )
    keys = [
        "users",
        "generator_kib_per_user",
        "generator_cpu_us_per_user_s",
        "achieved_ratio",
        "merge_ms",
    ]
    print(json.dumps({key: figures[key] for key in keys}))


if __name__ == "__main__":
    main()
