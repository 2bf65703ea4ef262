"""The control API's token: the generator as a process, started as the platforms start it
(the token in PLIMSOLL_CONTROL_TOKEN), probed with real HTTP calls."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from plimsoll.api.trial import CONTROL_TOKEN_ENV, CONTROL_TOKEN_HEADER
from tests.generator.helpers import generator_process
from tests.generator.target import TargetState
from tests.generator.test_control import body

TOKEN = "s3cret-run-token"


@pytest.fixture
def guarded_generator() -> Iterator[str]:
    with generator_process(1, {CONTROL_TOKEN_ENV: TOKEN}) as url:
        yield url


@pytest.mark.parametrize(
    "headers", [{}, {CONTROL_TOKEN_HEADER: "guess"}, {"Authorization": f"Bearer {TOKEN}"}]
)
def test_trials_without_the_token_are_refused(
    guarded_generator: str, target: tuple[TargetState, str], headers: dict[str, str]
) -> None:
    state, url = target
    answer = httpx.post(f"{guarded_generator}/trials", json=body(url), headers=headers)
    assert answer.status_code == 401
    assert CONTROL_TOKEN_HEADER in answer.json()["error"]
    assert httpx.get(f"{guarded_generator}/trials/x", headers=headers).status_code == 401
    # Held streams are load too.
    assert httpx.post(f"{guarded_generator}/streams", json={}, headers=headers).status_code == 401
    assert httpx.get(f"{guarded_generator}/streams", headers=headers).status_code == 401
    assert state.paths.get("/", 0) == 0  # no load was sent


def test_the_token_starts_a_trial_and_probes_stay_open(
    guarded_generator: str, target: tuple[TargetState, str]
) -> None:
    _, url = target
    assert httpx.get(f"{guarded_generator}/healthz").status_code == 200
    assert httpx.get(f"{guarded_generator}/metrics").status_code == 200
    headers = {CONTROL_TOKEN_HEADER: TOKEN}
    answer = httpx.post(
        f"{guarded_generator}/trials", json=body(url, duration=0.5), headers=headers
    )
    assert answer.status_code == 202
    trial = answer.json()["id"]
    assert httpx.get(f"{guarded_generator}/trials/{trial}", headers=headers).status_code == 200
    httpx.delete(f"{guarded_generator}/trials/{trial}", headers=headers)


def test_without_a_token_configured_every_trial_call_is_refused(
    target: tuple[TargetState, str],
) -> None:
    """No PLIMSOLL_CONTROL_TOKEN: never an open API (issue 52), whatever is presented."""
    state, url = target
    with generator_process(1, {CONTROL_TOKEN_ENV: ""}) as open_generator:
        for headers in ({}, {CONTROL_TOKEN_HEADER: ""}, {CONTROL_TOKEN_HEADER: TOKEN}):
            answer = httpx.post(f"{open_generator}/trials", json=body(url), headers=headers)
            assert answer.status_code == 401
            assert CONTROL_TOKEN_ENV in answer.json()["error"]
            assert httpx.get(f"{open_generator}/streams", headers=headers).status_code == 401
        assert httpx.get(f"{open_generator}/healthz").status_code == 200
    assert state.paths.get("/", 0) == 0
