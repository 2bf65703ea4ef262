"""Expiring credentials: on a 401 the client takes fresh ones and retries once.

The server is a real HTTP server on 127.0.0.1 (`FlakyServer`) that accepts one
bearer token; mid-run the token is replaced (as an exec plugin's token expires or
a ServiceAccount token is rotated), and the client's `relogin` reads the new one
from a file, as kopf's login re-reads the token file or the kubeconfig.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from plimsoll.kube.client import PODS, KubeClient, UnauthorizedError
from tests.kube.flaky_server import FlakyServer


def _info(server: FlakyServer, token: str) -> Any:
    """What kopf's login returns (a ConnectionInfo), with the fields the client reads."""
    return SimpleNamespace(
        server=server.url,
        token=token,
        scheme="Bearer",
        insecure=False,
        ca_path=None,
        ca_data=None,
        certificate_path=None,
        certificate_data=None,
        private_key_path=None,
        private_key_data=None,
        username=None,
        password=None,
    )


@pytest.fixture
async def server() -> AsyncIterator[FlakyServer]:
    flaky = FlakyServer(token="first")
    await flaky.start()
    yield flaky
    await flaky.stop()


def _client(server: FlakyServer, token_file: Path, logins: list[str]) -> KubeClient:
    async def relogin() -> Any:
        await asyncio.sleep(0.01)  # a login takes a while: concurrent 401s overlap it
        token = await asyncio.to_thread(token_file.read_text)
        logins.append(token)
        return _info(server, token)

    return KubeClient.from_connection(_info(server, token_file.read_text()), relogin=relogin)


async def test_a_replaced_token_is_fetched_again_and_the_request_retried(
    server: FlakyServer, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first")
    logins: list[str] = []
    client = _client(server, token_file, logins)
    assert await client.get(PODS, "ns", "a") is not None

    server.token = "second"  # the old token expires; the new one is in the file
    token_file.write_text("second")
    # several requests hit the 401 at once: one login serves them all
    answers = await asyncio.gather(*(client.get(PODS, "ns", n) for n in "bcd"))
    await client.aclose()

    assert all(answer is not None for answer in answers)
    assert logins == ["second"]
    assert [auth for _, _, auth in server.seen if auth == "Bearer second"] != []
    assert server.seen[-1][2] == "Bearer second"


async def test_still_refused_after_a_fresh_login_is_a_clear_error(
    server: FlakyServer, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first")
    logins: list[str] = []
    client = _client(server, token_file, logins)
    server.token = "revoked-for-good"
    with pytest.raises(UnauthorizedError, match="401"):
        await client.get(PODS, "ns", "a")
    await client.aclose()
    assert logins == ["first"]  # one fresh login, one retry, then the error
    assert len(server.seen) == 2


async def test_without_relogin_a_401_is_raised(server: FlakyServer) -> None:
    client = KubeClient.from_connection(_info(server, "wrong"))
    with pytest.raises(UnauthorizedError):
        await client.get(PODS, "ns", "a")
    await client.aclose()
    assert len(server.seen) == 1
