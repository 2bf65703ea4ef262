"""A small, bounded streaming client for the mock's LLM benchmark (bench/mock.py step 3).

Run as a separate process pinned to its own core: `python bench/mock_llm_client.py
--port P --concurrency 500 --warmup 3 --duration 10`. Each of N connections
loops POST /v1/chat/completions with `stream: true` over keep-alive, timing the
first body bytes (TTFT) and the end of the chunked body. It is a raw
`asyncio.Protocol` on uvloop, because a general HTTP client would spend more CPU
than the server it measures. Prints one JSON object: completions/s in the window
and TTFT percentiles.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import uvloop

BODY = json.dumps(
    {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "hello " * 50}]}
).encode()
REQUEST = (
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(BODY), BODY)
)
END = b"0\r\n\r\n"


class Stats:
    def __init__(self, window_start: float, window_end: float) -> None:
        self.window_start = window_start
        self.window_end = window_end
        self.completed = 0
        self.errors = 0
        self.ttfts: list[float] = []
        self.latencies: list[float] = []
        self.stopping = False


class Worker(asyncio.Protocol):
    def __init__(self, stats: Stats) -> None:
        self.stats = stats
        self.transport: asyncio.Transport | None = None
        self.sent = 0.0
        self.first = 0.0
        self.tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's own transport class

    def send(self) -> None:
        assert self.transport is not None
        if self.stats.stopping:
            self.transport.close()
            return
        self.sent = time.perf_counter()
        self.first = 0.0
        self.tail = b""
        self.transport.write(REQUEST)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if not self.first:
            self.first = now
            if not data.startswith(b"HTTP/1.1 200"):
                self.stats.errors += 1
        tail = self.tail + data[-5:] if len(data) < 5 else data[-5:]
        self.tail = tail[-5:]
        if self.tail == END:
            stats = self.stats
            if stats.window_start <= self.sent and now <= stats.window_end:
                stats.ttfts.append(self.first - self.sent)
                stats.latencies.append(now - self.sent)
            if stats.window_start <= now <= stats.window_end:
                stats.completed += 1
            self.send()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.stats.stopping:
            self.stats.errors += 1


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(port: int, concurrency: int, warmup: float, duration: float) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    start = time.perf_counter()
    stats = Stats(start + warmup, start + warmup + duration)
    workers: list[Worker] = []
    for i in range(0, concurrency, 100):
        connected = await asyncio.gather(
            *(
                loop.create_connection(lambda: Worker(stats), "127.0.0.1", port)
                for _ in range(min(100, concurrency - i))
            )
        )
        workers += [protocol for _, protocol in connected]
    # Spread the first requests over the warm-up: started together, the workers would
    # finish in lockstep and a window would count whole batches, not a steady rate.
    for i, worker in enumerate(workers):
        loop.call_later(warmup * 0.6 * i / concurrency, worker.send)
    await asyncio.sleep(max(0.0, stats.window_end - time.perf_counter()))
    stats.stopping = True
    return {
        "completions_per_s": stats.completed / duration,
        "ttft_p50_ms": percentile(stats.ttfts, 0.50) * 1000,
        "ttft_p99_ms": percentile(stats.ttfts, 0.99) * 1000,
        "latency_p50_ms": percentile(stats.latencies, 0.50) * 1000,
        "latency_p99_ms": percentile(stats.latencies, 0.99) * 1000,
        "samples": len(stats.ttfts),
        "errors": stats.errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--duration", type=float, default=10.0)
    args = parser.parse_args()
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        result = runner.run(run(args.port, args.concurrency, args.warmup, args.duration))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
