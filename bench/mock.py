"""Benchmark of the mock upstream, against nginx measured in the same run.

`python bench/mock.py` (about two minutes; needs nginx-light and wrk from Debian).
Each server runs pinned to core 0, its client to core 1.

1. Requests per CPU-second (per core) for a small fixed body: the mock vs
   nginx (one worker), both driven by wrk with the same connections and
   duration; best of three rounds each, interleaved, because the host is
   shared. Per CPU-second, not per wall second: wrk on one core cannot always
   keep nginx busy, and a server left idle part of the time would be compared
   below its capacity. The wall-clock requests/s are printed beside it.
2. RSS per held connection: 10,000 slow calls held open, then (in a fresh
   process) 10,000 held MCP SSE streams; the growth of VmRSS over the idle
   process divided by the count.
3. LLM streaming (TTFT 800 ms, ITL 15 ms, 100 tokens) with 500 concurrent
   clients (bench/mock_llm_client.py): completions/s against the Little's-law
   bound 500 / (0.8 + 99 x 0.015) and TTFT p99.

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import uvloop

sys.path.insert(0, str(Path(__file__).parent))
from mock_holder import hold, release

SERVER_CORE, CLIENT_CORE = "0", "1"
BODY = b'{"ok":true,"service":"bench","pad":"' + b"x" * 64 + b'"}'
HELD = 10_000
WRK_SECONDS, WRK_CONNECTIONS = 5, 50
LLM_TTFT, LLM_ITL, LLM_TOKENS, LLM_CLIENTS = 0.8, 0.015, 100, 500
ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mock:
    def __init__(self, config: dict[str, Any], tmp: Path) -> None:
        path = tmp / f"mock-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(config))
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                "taskset",
                "-c",
                SERVER_CORE,
                sys.executable,
                "-m",
                "plimsoll_mock",
                "--config",
                str(path),
                "--port",
                str(self.port),
                "--shutdown-grace",
                "0",
            ],
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the mock did not start")

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        assert match
        return int(match.group(1))

    def metric(self, name: str) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
        raise KeyError(name)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class Nginx:
    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        root = tmp / "nginx"
        root.mkdir(exist_ok=True)
        conf = root / "nginx.conf"
        temp = " ".join(
            f"{k}_temp_path {root}/{k};"
            for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        conf.write_text(f"""
worker_processes 1; daemon off; pid {root}/nginx.pid; error_log {root}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off; keepalive_requests 10000000; {temp}
  server {{ listen 127.0.0.1:{self.port};
    location / {{ default_type application/json; return 200 '{BODY.decode()}'; }} }}
}}""")
        self.proc = subprocess.Popen(
            ["taskset", "-c", SERVER_CORE, "nginx", "-c", str(conf), "-p", str(root)],
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.5)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def server_cpu(pid: int) -> float:
    """CPU seconds of a server process and its children (nginx's worker) so far."""
    process = psutil.Process(pid)
    total = 0.0
    for proc in [process, *process.children(recursive=True)]:
        times = proc.cpu_times()
        total += times.user + times.system
    return total


def wrk(port: int, server_pid: int) -> tuple[float, float]:
    """(requests/s, requests per CPU-second of the server) of one wrk run."""
    before = server_cpu(server_pid)
    out = subprocess.run(
        [
            "taskset",
            "-c",
            CLIENT_CORE,
            "wrk",
            "-t1",
            f"-c{WRK_CONNECTIONS}",
            f"-d{WRK_SECONDS}s",
            f"http://127.0.0.1:{port}/small",
        ],
        capture_output=True,
        text=True,
        timeout=WRK_SECONDS + 30,
        check=True,
    ).stdout
    used = server_cpu(server_pid) - before
    match = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    assert match, out
    assert total, out
    return float(match.group(1)), int(total.group(1)) / used


def small_rps(tmp: Path) -> tuple[tuple[float, float], tuple[float, float]]:
    """The best (requests/s, requests per CPU-second) of the mock and of nginx."""
    size = len(BODY)
    mock = Mock(
        {"routes": [{"name": "small", "path": "/small", "sizes": [{"bytes": str(size)}]}]}, tmp
    )
    nginx = Nginx(tmp)
    try:
        mock_runs, nginx_runs = [], []
        for _ in range(3):
            mock_runs.append(wrk(mock.port, mock.proc.pid))
            nginx_runs.append(wrk(nginx.port, nginx.proc.pid))
    finally:
        mock.stop()
        nginx.stop()
    for name, runs in (("mock", mock_runs), ("nginx", nginx_runs)):
        print(
            f"small body ({size} B), {name}: req/s {[round(r[0]) for r in runs]}, "
            f"req per CPU-second {[round(r[1]) for r in runs]}"
        )
    return (
        (max(r[0] for r in mock_runs), max(r[1] for r in mock_runs)),
        (max(r[0] for r in nginx_runs), max(r[1] for r in nginx_runs)),
    )


async def held_kib(config: dict[str, Any], request: bytes, gauge: str, tmp: Path) -> float:
    mock = Mock(config, tmp)
    try:
        warm = await hold(mock.port, request, 100)
        await asyncio.sleep(0.5)
        release(warm)
        await asyncio.sleep(0.5)
        before = mock.rss_kib()
        held = await hold(mock.port, request, HELD)
        deadline = time.monotonic() + 30
        # The count lives in another process: poll its /metrics, bounded by the deadline.
        while mock.metric(gauge) < HELD + 1 and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.2)
        # in_flight also counts the /metrics request that reads it
        count = mock.metric(gauge) - (1 if gauge.endswith("in_flight") else 0)
        after = mock.rss_kib()
        release(held)
    finally:
        mock.stop()
    per = (after - before) / count
    print(f"{gauge} = {count:.0f}: RSS {before} -> {after} KiB, {per:.2f} KiB each")
    return per


def llm(tmp: Path) -> dict[str, Any]:
    mock = Mock(
        {
            "llm": {
                "ttft": {"fixed": LLM_TTFT},
                "itl": {"fixed": LLM_ITL},
                "outputTokens": LLM_TOKENS,
            }
        },
        tmp,
    )
    try:
        out = subprocess.run(
            [
                "taskset",
                "-c",
                CLIENT_CORE,
                sys.executable,
                str(ROOT / "bench/mock_llm_client.py"),
                "--port",
                str(mock.port),
                "--concurrency",
                str(LLM_CLIENTS),
                "--warmup",
                "4",
                "--duration",
                "10",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    finally:
        mock.stop()
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    print(f"LLM streaming, {LLM_CLIENTS} clients: {result}")
    return result


def main() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < HELD + 1000:
        sys.exit(f"the fd limit ({hard}) is below the {HELD} connections this bench holds")
    os.sched_setaffinity(0, {int(CLIENT_CORE)})
    with tempfile.TemporaryDirectory(prefix="plimsoll-bench-") as tmpdir:
        tmp = Path(tmpdir)
        (mock_rps, mock_per_core), (nginx_rps, nginx_per_core) = small_rps(tmp)
        held_call = held_stream = 0.0
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            held_call = runner.run(
                held_kib(
                    {"routes": [{"name": "held", "path": "/held", "latency": {"fixed": "10m"}}]},
                    b"GET /held HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
                    "plimsoll_mock_in_flight",
                    tmp,
                )
            )
            held_stream = runner.run(
                held_kib(
                    {"mcp": {"tools": [{"name": "t"}], "keepAlive": "15s"}},
                    b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n"
                    b"mcp-session-id: 0123456789abcdef0123456789abcdef\r\n"
                    b"mcp-protocol-version: 2025-11-25\r\n\r\n",
                    "plimsoll_mock_held_streams",
                    tmp,
                )
            )
        result = llm(tmp)
    bound = LLM_CLIENTS / (LLM_TTFT + (LLM_TOKENS - 1) * LLM_ITL)
    print(f"LLM bound {bound:.1f}/s; reached {result['completions_per_s'] / bound:.1%}")
    print(
        json.dumps(
            {
                "mock_rps": round(mock_rps),
                "nginx_rps": round(nginx_rps),
                "mock_rps_per_core": round(mock_per_core),
                "nginx_rps_per_core": round(nginx_per_core),
                "ratio_vs_nginx": round(mock_per_core / nginx_per_core, 3),
                "ratio_rps_vs_nginx": round(mock_rps / nginx_rps, 3),
                "held_call_kib": round(held_call, 2),
                "held_stream_kib": round(held_stream, 2),
                "llm_rps_500": round(result["completions_per_s"], 1),
                "llm_bound_rps_500": round(bound, 1),
                "llm_ttft_p99_ms_500": round(result["ttft_p99_ms"], 1),
            }
        )
    )


if __name__ == "__main__":
    main()
