"""Modeled MCP users against the real mock: page views, bots' share, added latency.

One mock process serves the module: an MCP tool held 50 ms, a `/dashboard` page
held 10 ms, an LLM whose first token waits 100 ms, all reporting their time in
Server-Timing, so what the generator counts and measures can be checked against
what the mock was told to do.
"""

from __future__ import annotations

import asyncio
import math
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from plimsoll.api.trial import TrialState
from plimsoll.shared import histogram
from plimsoll_generator.context import TrialContext
from plimsoll_generator.mcp_users import McpSession
from plimsoll_generator.recorder import Recorder
from tests.generator.helpers import request, run
from tests.generator.mockproc import MockProcess

TOOL_HOLD = 0.050
TTFT = 0.100
CONFIG = {
    "routes": [{"name": "dashboard", "path": "/dashboard", "latency": {"fixed": "10ms"}}],
    "mcp": {"tools": [{"name": "slow", "latency": {"fixed": f"{TOOL_HOLD}s"}}]},
    "llm": {"ttft": {"fixed": f"{TTFT}s"}, "itl": {"fixed": "5ms"}, "outputTokens": 5},
}


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process = MockProcess(CONFIG, tmp_path_factory.mktemp("mock"))
    yield process.url
    process.stop()


def mock_count(url: str, route: str) -> int:
    """Answers the mock itself counted for `route`, from its /metrics."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    prefix = f'plimsoll_mock_requests_total{{route="{route}",'
    return sum(
        int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines() if line.startswith(prefix)
    )


def users(**settings: Any) -> dict[str, Any]:
    base = {"ramp": "0s", "holdStream": False, "reconnectEvery": None, "relistFraction": 0}
    base.update(settings)
    return {
        "protocol": "mcp",
        "model": "users",
        "mix": [{"name": "tool-call", "kind": "call", "tool": "slow"}],
        "users": base,
    }


async def test_users_view_the_page_view_path_at_the_declared_share(mock: str) -> None:
    before = mock_count(mock, "dashboard")
    workload = users(
        botFraction=0,
        burstGapMedian="100ms",
        meanGap="100ms",
        pageViewFraction="30%",
        pageViewPath="/dashboard",
    )
    result = await run(request(mock, workload, level=20, duration=2, warmUp=0.3))
    assert result.state is TrialState.DONE, result.errors
    calls = result.operations["tool-call"].outcomes.ok
    pages = result.operations["page_view"].outcomes
    assert pages.ok == pages.total == result.page_views > 0
    # 30% of calls come with a page view: a binomial share, within 5 sigma.
    spread = 5 * math.sqrt(0.3 * 0.7 / calls)
    assert abs(result.page_views / calls - 0.3) < spread
    # Every page view reached the mock's /dashboard (the warm-up's too, so at least).
    assert mock_count(mock, "dashboard") - before >= result.page_views


async def test_bots_make_the_declared_share_of_requests(mock: str) -> None:
    # 2 bots among 100 users make half the requests. The tool holds each call 50 ms, so
    # a bot calling one at a time could start at most 20 calls a second, 2 x 20 against
    # the humans' 98 x 2 per second: 17%, the shortfall the seed's bots showed. Constant
    # gaps (median = mean) keep the humans' own count nearly free of chance.
    workload = users(
        botFraction="2%",
        botShare="50%",
        burstGapMedian="500ms",
        meanGap="500ms",
        pageViewFraction=0,
        ramp="500ms",
    )
    result = await run(request(mock, workload, level=100, duration=2.5, warmUp=0.7))
    assert result.state is TrialState.DONE, result.errors
    calls = result.operations["tool-call"].outcomes
    assert calls.ok == calls.total > 800  # the users' connects fell in the warm-up
    share = result.bot_requests / result.sent
    # Within 4 binomial sigmas of the declared 50% (about 1,000 requests: ±6 points).
    assert abs(share - 0.5) < 4 * math.sqrt(0.25 / result.sent), (share, result.sent)


def quantile_ms(encoded: str | None, q: float) -> float:
    assert encoded is not None, "no histogram recorded"
    value = histogram.quantile_ms(histogram.decode(encoded), q)
    assert value is not None
    return value


async def test_users_record_what_came_on_top_of_the_upstreams_time(mock: str) -> None:
    workload = users(
        botFraction=0,
        burstGapMedian="100ms",
        meanGap="100ms",
        pageViewFraction="50%",
        pageViewPath="/dashboard",
    )
    result = await run(request(mock, workload, level=10, duration=1.5, warmUp=0.3))
    assert result.state is TrialState.DONE, result.errors
    for name, held in (("tool-call", TOOL_HOLD), ("page_view", 0.010)):
        op = result.operations[name]
        # The client waited at least what the mock held the call; the mock said so in
        # Server-Timing, so what is left is the client and loopback's own time, small.
        assert quantile_ms(op.latency, 0.5) >= held * 1000 - 1
        assert quantile_ms(op.added, 0.5) < 5.0
        assert quantile_ms(op.added, 0.5) < quantile_ms(op.latency, 0.5) / 5


@pytest.mark.parametrize("stream", [True, False])
async def test_conversations_record_added_latency(mock: str, stream: bool) -> None:
    workload = {
        "protocol": "openai",
        "model": "users",
        "mix": [{"name": "chat", "kind": "chat"}],
        "conversation": {"turns": 2, "promptChars": 40, "maxTokens": 8, "stream": stream},
    }
    result = await run(request(mock, workload, level=4, duration=1.5))
    assert result.state is TrialState.DONE, result.errors
    op = result.operations["chat"]
    assert op.outcomes.ok == op.outcomes.total >= 4
    # The mock's first token waits 100 ms (its Server-Timing for a stream, whose head
    # goes with the first token; the whole answer's time otherwise): added is the rest.
    assert quantile_ms(op.added, 0.5) < 5.0
    assert quantile_ms(op.latency, 0.5) >= TTFT * 1000 - 1


async def test_a_call_during_a_reconnect_waits_for_the_new_session(mock: str) -> None:
    # A bot's calls share its session; one sent while the session reconnects would carry
    # no session id, and the mock (as any MCP server) answers that with HTTP 400.
    req = request(mock, users(), level=1, warmUp=0)
    ctx = TrialContext.create(req, Recorder([op.name for op in req.workload.mix]), "127.0.0.1")
    session = McpSession(ctx, {})
    try:
        assert await session.connect()
        reconnect = asyncio.get_running_loop().create_task(session.connect())
        await asyncio.sleep(0)  # the reconnect has begun: the old session is dropped
        assert session.session is None
        outcome = await session.rpc("tool-call", "tools/call", {"name": "slow", "arguments": {}})
        assert outcome == "ok"
        assert await reconnect
        assert ctx.recorder.op("tool-call").ok == 1
    finally:
        ctx.pool.close()
