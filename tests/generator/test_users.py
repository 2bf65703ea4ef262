"""Modeled MCP users, conversations and held streams against the tiny target."""

from __future__ import annotations

from typing import Any

from plimsoll.api.trial import TrialState
from plimsoll.shared import histogram
from plimsoll_generator.client_ips import address
from tests.generator.helpers import request, run
from tests.generator.target import TargetState

MIX = [{"name": "echo", "kind": "call", "tool": "echo"}, {"name": "page", "path": "/page"}]


def users_workload(**users: Any) -> dict[str, Any]:
    settings = {"burstGapMedian": "6s", "meanGap": "90s", "ramp": "0s", "keepAliveTimeout": "1s"}
    settings.update(users)
    return {
        "protocol": "mcp",
        "model": "users",
        "mix": MIX,
        "users": settings,
        "clientIps": {"pool": 1000, "verifyPath": "/whoami"},
    }


async def test_users_hold_streams_call_and_bots_dominate(target: tuple[TargetState, str]) -> None:
    state, url = target
    state.tool_error_every = 4
    workload = users_workload(
        botFraction="10%", botShare=None, botGap="50ms", pageViewFraction="50%"
    )
    result = await run(request(url, workload, level=20, duration=1.5))
    assert result.state is TrialState.DONE, result.errors
    # Every user held one stream all trial, and keep-alives (every 0.2 s) were on time.
    assert result.streams.opened == 20
    assert result.streams.held_at_end == 20
    assert result.streams.missed_keep_alives == 0
    assert result.streams.dropped == 0
    # Each user made the handshake and listed tools, with its own client address.
    assert state.methods.count("initialize") == 20
    assert "notifications/initialized" in state.methods
    assert {address(i) for i in range(20)} <= state.forwarded
    # Two bots at 20 calls/s outnumber 18 humans whose gaps are seconds long.
    calls = result.operations["echo"].outcomes
    assert calls.ok + calls.application > 40
    assert calls.application > 0  # the target's tool errors are application errors
    pages = result.operations["page"].outcomes.ok
    assert 0.25 < pages / (calls.ok + calls.application) < 0.75


async def test_the_client_ip_check_fails_when_the_target_ignores_the_header(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    state.honour_xff = False
    result = await run(request(url, users_workload(), level=2, duration=1))
    assert result.state is TrialState.FAILED
    assert "does not honour X-Forwarded-For" in result.errors[0]
    assert "trusted-proxy" in result.errors[0]
    assert state.methods == []  # no load was sent


async def test_stateless_revision_discovers_instead_of_handshaking(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    workload = users_workload(botFraction="100%", botGap="100ms", holdStream=False)
    workload["mcpRevision"] = "2026-07-28"
    result = await run(request(url, workload, level=2, duration=1))
    assert result.state is TrialState.DONE
    assert "initialize" not in state.methods
    assert state.methods.count("server/discover") == 2
    assert result.operations["echo"].outcomes.ok > 5


async def test_mcp_calls_at_a_constant_rate(target: tuple[TargetState, str]) -> None:
    state, url = target
    workload = {
        "protocol": "mcp",
        "arrival": "uniform",
        "mix": [{"name": "echo", "kind": "call", "tool": "echo"}],
    }
    result = await run(request(url, workload, level=50, duration=1))
    assert result.operations["echo"].outcomes.ok == 50
    assert state.methods.count("initialize") == 1


async def test_conversations_stream_and_record_time_to_first_token(
    target: tuple[TargetState, str],
) -> None:
    _, url = target
    workload = {
        "protocol": "openai",
        "model": "users",
        "mix": [{"name": "chat", "kind": "chat", "method": "POST"}],
        "conversation": {"turns": 3, "promptChars": 50},
    }
    result = await run(request(url, workload, level=3, duration=1.5))
    op = result.operations["chat"]
    assert op.outcomes.ok >= 6
    assert op.ttft is not None
    ttft = histogram.decode(op.ttft)
    total = histogram.decode(op.latency)
    assert histogram.quantile_ms(ttft, 0.5) < histogram.quantile_ms(total, 0.5)  # type: ignore[operator]


async def test_the_streams_probe_holds_its_streams(target: tuple[TargetState, str]) -> None:
    _, url = target
    workload = {"mix": [{"name": "hello"}], "streams": {"count": 300, "path": "/sse"}}
    result = await run(request(url, workload, level=1, duration=1.5))
    assert result.streams.opened == 300
    assert result.streams.held_at_end == 300
    assert result.streams.failed_to_open == 0
