"""Modeled MCP users against the real mock: page views, bots' share, added latency.

One mock process serves the module: an MCP tool held 50 ms, a `/dashboard` page
held 10 ms, both reporting their time in Server-Timing, so what the generator
counts and measures can be checked against what the mock was told to do.
"""

from __future__ import annotations

import math
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from plimsoll.api.trial import TrialState
from tests.generator.helpers import request, run
from tests.generator.mockproc import MockProcess

TOOL_HOLD = 0.050
CONFIG = {
    "routes": [{"name": "dashboard", "path": "/dashboard", "latency": {"fixed": "10ms"}}],
    "mcp": {"tools": [{"name": "slow", "latency": {"fixed": f"{TOOL_HOLD}s"}}]},
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
