"""Per-user credentials reach the target: each modeled user of every driver that models
users (plain HTTP's closed loop, MCP users, LLM conversations) sends its own key (and
its identity headers with it), and users of a second generator process (`firstUser`)
send keys no other process sends."""

from __future__ import annotations

from typing import Any

from plimsoll.api.trial import TrialState
from tests.generator.helpers import request, run
from tests.generator.target import TargetState

CREDENTIALS = {"header": "Authorization", "template": "Bearer sk-user-{index}"}


def chats(credentials: dict[str, Any]) -> dict[str, Any]:
    """Two-turn OpenAI conversations, each user with `credentials`."""
    return {
        "protocol": "openai",
        "model": "users",
        "mix": [{"name": "chat", "kind": "chat", "method": "POST"}],
        "conversation": {"turns": 2, "promptChars": 20},
        "credentials": credentials,
    }


def keys(indexes: range) -> set[str]:
    return {f"Bearer sk-user-{i}" for i in indexes}


async def test_each_closed_loop_user_sends_its_own_key(target: tuple[TargetState, str]) -> None:
    state, url = target
    workload = {"model": "users", "mix": [{"name": "hello"}], "credentials": CREDENTIALS}
    result = await run(request(url, workload, level=3, duration=0.5))
    assert result.state is TrialState.DONE, result.errors
    assert set(state.keys) == keys(range(3))
    assert all(count > 1 for count in state.keys.values())  # every request carried one


async def test_each_conversation_sends_its_users_key_from_first(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    workload = chats({**CREDENTIALS, "first": 1})
    result = await run(request(url, workload, level=4, duration=1.5))
    assert result.operations["chat"].outcomes.ok >= 4
    assert set(state.keys) == keys(range(1, 5))


async def test_each_user_sends_its_identity_headers_with_its_key(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    workload = chats({**CREDENTIALS, "first": 1, "identity": {"X-User-Id": "user-{index}"}})
    result = await run(request(url, workload, level=3, duration=1.5))
    assert result.operations["chat"].outcomes.ok >= 3
    assert state.identities == {(f"Bearer sk-user-{i}", f"user-{i}") for i in range(1, 4)}


async def test_mcp_users_and_a_second_process_send_keys_of_their_own(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    workload = {
        "protocol": "mcp",
        "model": "users",
        "mix": [{"name": "echo", "kind": "call", "tool": "echo"}],
        "users": {"botFraction": "100%", "botGap": "100ms", "ramp": "0s", "holdStream": False},
        "credentials": CREDENTIALS,
    }
    # The second of two processes: its users are numbered after the first's two.
    result = await run(request(url, workload, level=2, duration=1, firstUser=2))
    assert result.state is TrialState.DONE, result.errors
    assert result.operations["echo"].outcomes.ok > 0
    assert set(state.keys) == keys(range(2, 4))
