"""A synthetic nginx JSON access log of the MCP gateway seed's users, for calibration.

Drawn with the generator's own behaviour (`plimsoll_generator.behaviour`: bursty
gaps, bots at `bot_rate`) and the mock's latency and size models, so the
parameters that made it are known exactly. Used by `bench/calibrate.py` (a
million lines) and the calibration CLI's tests (a few thousand). Written in
end order, as nginx writes.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Iterator
from pathlib import Path

from plimsoll.api.upstream import Latency
from plimsoll.api.workload import Users
from plimsoll.shared.distributions import latency_sampler
from plimsoll_generator.behaviour import GapModel, bot_rate, is_bot

EPOCH = 1_764_000_000.0
SEED_USERS = Users(
    burst_gap_median=6.0,
    mean_gap=90.0,
    bot_fraction=0.01,
    bot_share=0.5,
    reconnect_every=None,
    page_view_fraction=0.05,
    page_view_path="/dashboard",
)
SEED_LATENCY = Latency(p50=1.2, p95=12.0, max=50.0)
ERROR_SHARE = 0.08
BIG_SHARE = 0.02  # 2% of answers around 1 MiB, the rest 4 KiB


def _user_calls(
    index: int, users: Users, latency: Latency, span: float, rng: random.Random
) -> Iterator[tuple[float, dict[str, str]]]:
    bot = is_bot(index, users.bot_fraction)
    gaps = GapModel(users.burst_gap_median, users.mean_gap)
    rate = bot_rate(users)
    draw = latency_sampler(latency, rng)
    address = f"10.{index >> 16 & 255}.{index >> 8 & 255}.{index & 255}"
    start = rng.uniform(0, users.mean_gap)
    pending: list[tuple[float, int, dict[str, str]]] = []  # by end: a line is written then
    count = 0
    while start < span:
        while pending and pending[0][0] <= start:  # every later line ends after `start`
            end, _, body = heapq.heappop(pending)
            yield end, body
        took = draw()
        failed = rng.random() < ERROR_SHARE
        size = 1_048_576 if rng.random() < BIG_SHARE else 4096
        line = _line(address, "POST /mcp", 500 if failed else 200, took, size)
        heapq.heappush(pending, (start + took, count := count + 1, line))
        if rng.random() < users.page_view_fraction:  # bots' calls too, as the generator's
            page = _line(address, "GET /dashboard", 200, 0.002, 900)
            heapq.heappush(pending, (start + 0.002, count := count + 1, page))
        # A person waits for the answer (as the generator's users do); a bot does not.
        start += rng.expovariate(rate) if bot else max(gaps.sample(rng)[0], took)
    while pending:
        end, _, body = heapq.heappop(pending)
        yield end, body


def _line(address: str, request: str, status: int, took: float, size: int) -> dict[str, str]:
    return {
        "remote_addr": address,
        "request": f"{request} HTTP/1.1",
        "status": str(status),
        "request_time": f"{took + 0.001:.3f}",
        "upstream_response_time": f"{took:.3f}",
        "body_bytes_sent": str(size),
    }


def write(
    path: Path,
    users: int,
    span: float,
    *,
    seed: int = 7,
    model: Users = SEED_USERS,
    latency: Latency = SEED_LATENCY,
) -> int:
    """Write the log of `users` users over `span` seconds; the number of lines."""
    rng = random.Random(seed)
    streams = [_user_calls(i, model, latency, span, rng) for i in range(users)]
    lines = 0
    with path.open("w") as out:
        for end, body in heapq.merge(*streams, key=lambda item: item[0]):
            body["msec"] = f"{EPOCH + end:.3f}"
            out.write(json.dumps(body) + "\n")
            lines += 1
    return lines


def lines_for(users: int, span: float, model: Users = SEED_USERS) -> float:
    """About how many lines `write` makes (to size a log to a line count)."""
    humans = users * (1 - model.bot_fraction)
    calls = humans * span / model.mean_gap * (1 + model.page_view_fraction)
    bots = users * model.bot_fraction * bot_rate(model) * span
    return calls + bots
