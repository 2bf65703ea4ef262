"""Benchmark of the load generator against wrk, both pinned beside nginx.

Run: `.venv/bin/python bench/generator.py`. nginx (one worker, a small static
body) is pinned to core 0; wrk and the generator take turns on core 1. Figures:

- closed loop, 64 connections, 5 s each, three interleaved rounds, the best
  round of each client kept: requests/s and CPU microseconds per request
  (process CPU seconds / requests: steadier than requests/s, since nginx may
  cap both); `ratio_vs_wrk` = wrk's CPU per request / the generator's. The
  third client in each round is `RAW_LOOP`, the least any uvloop + httptools
  client can spend (`raw_cpu_us_per_req`; `ratio_vs_raw` = its CPU per request
  / the generator's): what is left between it and wrk is Python's and
  uvloop's, not the generator's. `raw_ratio_vs_wrk` = wrk's CPU per request /
  the floor's: the most any Python client on this stack could score as
  `ratio_vs_wrk` in that run. The fourth is `RECORDING_LOOP`, the floor plus
  what every answer costs a client that measures it (a clock read, the latency
  kept, the status judged, keep-alive read, Server-Timing looked for, bytes
  counted), all in one class: `recording_ratio_vs_wrk` is the most an honest
  Python generator could score, `ratio_vs_recording` how near the generator
  comes to it. Both floors run as plain Python; the generator's hot path is
  compiled by Cython from its own source when the install built it
  (hatch_build.py, the README's set-up does), so `ratio_vs_recording` can pass
  1. `hot_path` says which ran: "compiled" or "python";
- open model at 5,000 requests/s (uniform): latency from the intended start,
  p50/p99; nginx sends no Server-Timing and its `$request_time` reads 0.000 at
  this size, so the whole client latency is the generator-added figure, an
  upper bound; and the generator's CPU share at that rate. The reference is
  wrk at the same rate, open model too: a Lua script (`PACED_LUA`) gives every
  request the next slot of a fixed 5,000/s schedule (wrk2 is not in Debian and
  cannot be fetched here). Its latency runs from its own send, never from an
  intended start, so it flatters wrk a little. Both take turns, ROUNDS times,
  each keeping its best round; `open_p99_ratio` = the generator's p99 / wrk's
  (`wrk_p99_ms_5k`): the host's tail is in both, the ratio is what the
  generator adds to it. The bench waits out each trial before it polls for the
  result: a poll costs CPU on the host being measured, which wrk's runs do not
  pay (polling every 0.2 s had put the generator's p99 at 2.4x wrk's; 1.3x
  without);
- memory per held SSE stream: generator RSS growth holding 10,000 streams
  against a minimal SSE server written here (pinned to core 0);
- memory per held WebSocket stream (`ws_stream_kib`): a fresh generator holding
  5,000 WebSockets against a minimal WebSocket server written here (fresh, so
  memory the SSE streams freed is not reused and counted as nothing).

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil

from plimsoll.api.trial import CONTROL_TOKEN_ENV, CONTROL_TOKEN_HEADER, TrialResult
from plimsoll.shared import histogram

ROOT = Path(__file__).resolve().parents[1]
SERVER_CORE, CLIENT_CORE = "0", "1"
CONNECTIONS = 64
SECONDS = 5
ROUNDS = 3
STREAMS = 10_000
WS_STREAMS = 5_000
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def raise_nofile() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def start_nginx(workdir: Path, port: int) -> subprocess.Popen[bytes]:
    conf = workdir / "nginx.conf"
    conf.write_text(
        f"""
worker_processes 1;
daemon off;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    client_body_temp_path {workdir};
    proxy_temp_path {workdir};
    fastcgi_temp_path {workdir};
    uwsgi_temp_path {workdir};
    scgi_temp_path {workdir};
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 200 "hello from nginx\\n"; }}
    }}
}}
"""
    )
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen(
        ["taskset", "-c", SERVER_CORE, nginx, "-c", str(conf), "-p", str(workdir)]
    )
    wait_port(port)
    return proc


def wait_port(port: int, limit: float = 15.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def hot_path() -> str:
    """Whether the generator this bench starts (`-m plimsoll_generator`, this interpreter
    and install) runs its hot path compiled (hatch_build.py) or as Python."""
    done = subprocess.run(
        [sys.executable, "-c", "import plimsoll_generator.client as c; print(c.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return "python" if done.stdout.strip().endswith(".py") else "compiled"


def run_wrk(port: int) -> tuple[float, float]:
    """(requests/s, CPU microseconds per request) of wrk, from its own rusage."""
    proc = subprocess.Popen(
        [
            "taskset",
            "-c",
            CLIENT_CORE,
            "wrk",
            "-t1",
            f"-c{CONNECTIONS}",
            f"-d{SECONDS}s",
            f"http://127.0.0.1:{port}/",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return rps, (usage.ru_utime + usage.ru_stime) / total * 1e6


# The Python floors: the least a uvloop + httptools closed loop can spend per request.
# RAW_LOOP's client only reads and sends (no recording, no pool, no timeouts, no counters):
# it shows how much of the generator's CPU per request is its own Python and how much any
# Python client on this host pays. RECORDING_LOOP's client also does what every answer
# costs a client that measures, in one class and no call it could do without: a clock
# read, the latency kept, the status judged, keep-alive read, the head searched for
# Server-Timing, the bytes counted. Nothing a generator could drop and stay honest.
_FLOOR_LOOP = """
import asyncio, resource, sys, time, httptools, uvloop
port, conns, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
request = b"GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n"
done = [0]
ok = [0]
latencies = []
_perf = time.perf_counter
EXPECTED = frozenset({200})
CLIENT_CLASS
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
async def main():
    global end, before
    before = cpu()
    end = time.monotonic() + seconds
    loop = asyncio.get_running_loop()
    for _ in range(conns):
        await loop.create_connection(Client, "127.0.0.1", port)
    await asyncio.sleep(seconds + 0.2)
uvloop.run(main())
print(done[0], (cpu() - before) / done[0] * 1e6, ok[0], len(latencies))
"""
RAW_LOOP = _FLOOR_LOOP.replace(
    "CLIENT_CLASS",
    """
class Client(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.parser = transport, httptools.HttpResponseParser(self)
        transport.write(request)
    def data_received(self, data):
        self.parser.feed_data(data)
    def on_message_complete(self):
        done[0] += 1
        if time.monotonic() < end:
            self.transport.write(request)
""",
)
RECORDING_LOOP = _FLOOR_LOOP.replace(
    "CLIENT_CLASS",
    """
class Client(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.parser = transport, httptools.HttpResponseParser(self)
        self.bytes_in = self.bytes_out = 0
        self.timing = None
        self.start = _perf()
        self.bytes_out += len(request)
        transport.write(request)
    def data_received(self, data):
        self.bytes_in += len(data)
        head_end = data.find(b"\\r\\n\\r\\n")
        if data.find(b"dur=", 0, head_end) >= 0:
            self.timing = data
        self.parser.feed_data(data)
    def on_message_complete(self):
        now = _perf()
        parser = self.parser
        done[0] += 1
        if parser.get_status_code() in EXPECTED:
            ok[0] += 1
        latencies.append(int((now - self.start) * 1e6))
        if parser.should_keep_alive() and time.monotonic() < end:
            self.start = now
            self.bytes_out += len(request)
            self.transport.write(request)
""",
)


def run_floor(code: str, port: int) -> tuple[float, float]:
    """(requests/s, CPU microseconds per request) of a floor loop, from the loop's start
    (the interpreter's start and imports left out)."""
    command = ["taskset", "-c", CLIENT_CORE, sys.executable, "-c", code]
    out = subprocess.run(
        [*command, str(port), str(CONNECTIONS), str(SECONDS)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    answered, ok, recorded = int(out[0]), int(out[2]), int(out[3])
    if code is RECORDING_LOOP and not answered == ok == recorded:
        raise RuntimeError(f"the recording floor lost answers: {answered}, {ok} ok, {recorded}")
    return answered / SECONDS, float(out[1])


# wrk's `delay()` is asked before each request how many ms to wait: each request takes
# the next slot of a fixed schedule at RATE/s (LuaJIT's FFI reads the monotonic clock;
# wrk's Lua has none finer than a second). Whole ms only, as wrk's timers are: a request
# leaves up to 1 ms early, which no latency sees (wrk times from the send).
PACED_LUA = """
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } plimsoll_timespec;
int clock_gettime(int clock, plimsoll_timespec *out);
]]
local ts = ffi.new("plimsoll_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local interval = 1000 / RATE
local next_slot = nil
function delay()
  local now = now_ms()
  if next_slot == nil then next_slot = now end
  local slot = next_slot
  next_slot = next_slot + interval
  if slot <= now then return 0 end
  return math.floor(slot - now)
end
"""
OPEN_RATE = 5000
PACED_CONNECTIONS = 16  # enough that no slot waits for a free connection at 5,000/s


def run_wrk_paced(port: int, workdir: Path) -> tuple[float, float]:
    """wrk's (requests/s, p99 ms) paced at OPEN_RATE by PACED_LUA: the open-model reference."""
    script = workdir / "paced.lua"
    script.write_text(PACED_LUA.replace("RATE", str(OPEN_RATE)))
    out = subprocess.run(
        [
            *("taskset", "-c", CLIENT_CORE, "wrk", "-t1", f"-c{PACED_CONNECTIONS}"),
            *(f"-d{SECONDS}s", "--latency", "-s", str(script), f"http://127.0.0.1:{port}/"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    return rps, float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


BENCH_TOKEN = "bench-control-token"


def start_generator(port: int) -> subprocess.Popen[bytes]:
    command = ["taskset", "-c", CLIENT_CORE, sys.executable, "-m", "plimsoll_generator"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--processes", "1"]
    env = {**os.environ, CONTROL_TOKEN_ENV: BENCH_TOKEN}  # no token: every trial refused
    proc = subprocess.Popen(command, preexec_fn=raise_nofile, env=env)
    wait_port(port)
    return proc


def trial(control: str, body: dict[str, Any], during: Any = None) -> TrialResult:
    headers = {CONTROL_TOKEN_HEADER: BENCH_TOKEN}
    with httpx.Client(base_url=control, timeout=30, headers=headers) as client:
        answer = client.post("/trials", json=body)
        answer.raise_for_status()
        trial_id = answer.json()["id"]
        started = time.monotonic()
        extra = during() if during else None
        # No poll while the trial runs: each one costs this process and the generator
        # CPU on the host the trial measures, which wrk's runs never pay.
        time.sleep(max(started + body.get("warmUp", 0) + body["duration"] - time.monotonic(), 0))
        while True:
            result = TrialResult.model_validate(client.get(f"/trials/{trial_id}").json())
            if result.state.value != "running":
                break
            time.sleep(0.2)
    if result.errors:
        print("  errors:", result.errors[:3])
    if extra is not None:
        result.__dict__["_extra"] = extra
    return result


async def _hold_server(port: int, answer: Callable[[bytes], bytes]) -> None:
    """Answer each request head on `port` with `answer(head)`, then hold the connection
    open until the client leaves: the far end of the streams the generator holds."""

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        writer.write(answer(head))
        try:
            await reader.read()  # until the client leaves
        finally:
            writer.close()

    server = await asyncio.start_server(hold, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


def _sse_head(head: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: hi\n\n"


def _ws_head(head: bytes) -> bytes:
    key = re.search(rb"(?i)sec-websocket-key:\s*(\S+)", head)
    accept = base64.b64encode(hashlib.sha1((key.group(1) if key else b"") + WS_GUID).digest())
    return (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n\x89\x00"
    )


async def sse_server(port: int) -> None:
    await _hold_server(port, _sse_head)


async def ws_server(port: int) -> None:
    await _hold_server(port, _ws_head)


def start_stream_server(name: str, port: int) -> subprocess.Popen[bytes]:
    code = (
        f"import asyncio, uvloop, sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); "
        f"from generator import {name}; uvloop.run({name}({port}))"
    )
    proc = subprocess.Popen(
        ["taskset", "-c", SERVER_CORE, sys.executable, "-c", code], preexec_fn=raise_nofile
    )
    wait_port(port)
    return proc


def held_kib(
    control: str, pid: int, server_port: int, workload: dict[str, Any], label: str
) -> float:
    """Generator RSS growth per stream while it holds the streams of `workload`."""
    process = psutil.Process(pid)
    before = process.memory_info().rss

    def held_rss() -> int:
        time.sleep(5.0)  # streams open in batches of 200 every 20 ms: ~1 s
        return int(process.memory_info().rss)

    streams = trial(
        control,
        {
            "level": 0,
            "duration": 7,
            "targetUrl": f"http://127.0.0.1:{server_port}",
            "workload": workload,
        },
        during=held_rss,
    )
    held = streams.streams.held_at_end
    growth = streams.__dict__["_extra"] - before
    kib = float(growth / max(held, 1) / 1024)
    print(
        f"generator  {held:,} held {label} streams: RSS +{growth / 2**20:.1f} MiB, "
        f"{kib:.2f} KiB/stream"
    )
    return kib


def best_closed(
    label: str, rounds: list[tuple[float, float]], note: str = ""
) -> tuple[float, float]:
    """The round with the least CPU per request of one closed-loop client, printed."""
    rps, cpu = min(rounds, key=lambda r: r[1])
    print(
        f"{label:10} closed loop {CONNECTIONS} conns: {rps:,.0f} req/s, {cpu:.2f} us CPU/req "
        f"(best of {[round(r[1], 2) for r in rounds]}){note}"
    )
    return rps, cpu


def main() -> None:
    raise_nofile()
    workdir = Path(tempfile.mkdtemp(prefix="plimsoll-bench-"))
    nginx_port, gen_port, sse_port, ws_port = free_port(), free_port(), free_port(), free_port()
    control = f"http://127.0.0.1:{gen_port}"
    target = f"http://127.0.0.1:{nginx_port}"
    nginx = start_nginx(workdir, nginx_port)
    gen = start_generator(gen_port)
    sse = ws = None
    try:
        # wrk and the generator take turns, ROUNDS times; each keeps its best round.
        # One round's CPU per request moves by ~15% with the host's other load.
        mix = [{"name": "hello", "path": "/"}]
        wrk_rounds, gen_rounds, raw_rounds, recording_rounds = [], [], [], []
        for _ in range(ROUNDS):
            wrk_rounds.append(run_wrk(nginx_port))
            raw_rounds.append(run_floor(RAW_LOOP, nginx_port))
            recording_rounds.append(run_floor(RECORDING_LOOP, nginx_port))
            closed = trial(
                control,
                {
                    "level": CONNECTIONS,
                    "duration": SECONDS,
                    "warmUp": 1,
                    "targetUrl": target,
                    "workload": {"model": "users", "mix": mix},
                },
            )
            gen_rounds.append(
                (closed.sent / closed.measured_seconds, closed.cpu_seconds / closed.sent * 1e6)
            )
        wrk_rps, wrk_cpu = best_closed("wrk", wrk_rounds)
        gen_rps, gen_cpu = best_closed("generator", gen_rounds)
        _, raw_cpu = best_closed("raw loop", raw_rounds, ": the Python floor")
        _, recording_cpu = best_closed("recording", recording_rounds, ": the floor that records")

        # The open model: the generator and the paced wrk take turns at OPEN_RATE.
        gen_open, wrk_open = [], []
        for _ in range(ROUNDS):
            opened = trial(
                control,
                {
                    "level": OPEN_RATE,
                    "duration": SECONDS,
                    "warmUp": 1,
                    "targetUrl": target,
                    "workload": {"arrival": "uniform", "mix": mix},
                },
            )
            latency = histogram.decode(opened.operations["hello"].latency)
            gen_open.append(
                (
                    histogram.quantile_ms(latency, 0.99) or 0.0,
                    histogram.quantile_ms(latency, 0.5) or 0.0,
                    opened.cpu_seconds / opened.measured_seconds * 100,
                    opened,
                )
            )
            wrk_open.append(run_wrk_paced(nginx_port, workdir))
        p99, p50, cpu_pct, opened = min(gen_open, key=lambda r: r[0])
        wrk_open_rps, wrk_p99 = min(wrk_open, key=lambda r: r[1])
        print(
            f"generator  open model {OPEN_RATE:,}/s: sent {opened.sent}/{opened.intended}, "
            f"dropped {opened.dropped_starts}, p50 {p50:.3f} ms, p99 {p99:.3f} ms, CPU "
            f"{cpu_pct:.1f}% (best of p99 {[round(r[0], 3) for r in gen_open]})"
        )
        print(
            f"wrk        paced at {wrk_open_rps:,.0f} req/s (open model, Lua schedule): "
            f"p99 {wrk_p99:.3f} ms (best of {[round(r[1], 3) for r in wrk_open]})"
        )
        print(f"open_p99_ratio = {p99 / wrk_p99:.2f} (generator p99 / wrk p99, same rate)")

        sse = start_stream_server("sse_server", sse_port)
        stream_kib = held_kib(
            control,
            gen.pid,
            sse_port,
            {"mix": mix, "streams": {"count": STREAMS, "path": "/sse"}},
            "SSE",
        )
        gen.terminate()
        gen.wait(timeout=10)
        gen = start_generator(gen_port)  # fresh: see the docstring
        ws = start_stream_server("ws_server", ws_port)
        ws_kib = held_kib(
            control,
            gen.pid,
            ws_port,
            {"mix": mix, "streams": {"count": WS_STREAMS, "kind": "websocket", "path": "/ws"}},
            "WebSocket",
        )
    finally:
        for proc in (gen, sse, ws, nginx):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)

    print(
        json.dumps(
            {
                "gen_rps": round(gen_rps),
                "wrk_rps": round(wrk_rps),
                "gen_cpu_us_per_req": round(gen_cpu, 2),
                "wrk_cpu_us_per_req": round(wrk_cpu, 2),
                "ratio_vs_wrk": round(wrk_cpu / gen_cpu, 3),
                "raw_cpu_us_per_req": round(raw_cpu, 2),
                "ratio_vs_raw": round(raw_cpu / gen_cpu, 3),
                "raw_ratio_vs_wrk": round(wrk_cpu / raw_cpu, 3),
                "recording_cpu_us_per_req": round(recording_cpu, 2),
                "ratio_vs_recording": round(recording_cpu / gen_cpu, 3),
                "recording_ratio_vs_wrk": round(wrk_cpu / recording_cpu, 3),
                "added_p50_ms_5k": round(p50, 3),
                "added_p99_ms_5k": round(p99, 3),
                "cpu_pct_5k": round(cpu_pct, 1),
                "stream_kib": round(stream_kib, 2),
                "ws_stream_kib": round(ws_kib, 2),
                "wrk_p99_ms_5k": round(wrk_p99, 3),
                "wrk_rps_5k": round(wrk_open_rps),
                "open_p99_ratio": round(p99 / wrk_p99, 3),
                "hot_path": hot_path(),
            }
        )
    )


if __name__ == "__main__":
    main()
