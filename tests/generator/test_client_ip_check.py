"""`POST /client-ips`: the generator, as a process with its run's token, checks whether the
target honours the client-address header before the first trial (issue 52: the operator's
pod no longer sends the probe itself). Real HTTP on loopback to the test target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from plimsoll.api.trial import CONTROL_TOKEN_ENV, CONTROL_TOKEN_HEADER
from plimsoll_generator.client_ips import address
from tests.generator.helpers import generator_process
from tests.generator.target import TargetState

TOKEN = "run-token"
HEADERS = {CONTROL_TOKEN_HEADER: TOKEN}


@pytest.fixture
def generator() -> Iterator[str]:
    with generator_process(1, {CONTROL_TOKEN_ENV: TOKEN}) as url:
        yield url


def _check(url: str, **extra: Any) -> dict[str, Any]:
    return {"targetUrl": url, "clientIps": {"pool": 100, "verifyPath": "/whoami"}, **extra}


async def _post(generator: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    """Asynchronously: the test target answers on this test's event loop."""
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.post(f"{generator}/client-ips", json=body, headers=headers)


async def test_a_target_that_echoes_each_address_passes(
    generator: str, target: tuple[TargetState, str]
) -> None:
    state, url = target
    answer = await _post(generator, _check(url), HEADERS)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {}  # no problem: the field is left out, as every None is
    assert {address(0), address(99)} <= state.forwarded  # both probes, each its own address


async def test_a_target_that_ignores_the_header_gets_instructions_not_its_own_words(
    generator: str, target: tuple[TargetState, str]
) -> None:
    state, url = target
    state.honour_xff = False
    answer = await _post(generator, _check(url), HEADERS)
    problem = answer.json()["problem"]
    assert "does not honour X-Forwarded-For" in problem
    assert "127.0.0.1" not in problem  # the target's answer (its view of the peer) stays out


async def test_a_target_in_a_refused_network_is_never_asked(
    generator: str, target: tuple[TargetState, str]
) -> None:
    state, url = target
    refused = _check(url, refusedNetworks=["127.0.0.0/8"])
    problem = (await _post(generator, refused, HEADERS)).json()
    assert "which the operator refuses" in problem["problem"]
    assert not state.forwarded  # no request was sent


async def test_without_the_token_nothing_is_sent(
    generator: str, target: tuple[TargetState, str]
) -> None:
    state, url = target
    for headers in ({}, {CONTROL_TOKEN_HEADER: "guess"}):
        answer = await _post(generator, _check(url), headers)
        assert answer.status_code == 401
    assert not state.forwarded
    bad = await _post(generator, {"targetUrl": "ftp://x"}, HEADERS)
    assert bad.status_code == 422
