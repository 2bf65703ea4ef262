"""Request-body size mixes: exact sizes, drawn by weight, sent to the real mock.

The mock's `/upload` route echoes what it receives, so a body that was not sent
whole would come back short or fail; the generator's byte count says how many
bodies of each size went out.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator

import pytest

from plimsoll.api.trial import TrialState
from plimsoll.api.workload import BodySize, Operation
from plimsoll_generator.bodies import SizeMix, padded_json
from plimsoll_generator.client import build_request, split_url
from plimsoll_generator.mcp_users import call_params
from tests.generator.helpers import request, run
from tests.generator.mockproc import MockProcess

SMALL, LARGE = 1024, 64 * 1024
SIZES = [{"size": "1Ki", "weight": 90}, {"size": "64Ki", "weight": 10}]
CONFIG = {
    "routes": [{"name": "upload", "method": "POST", "path": "/upload", "echo": True}],
    "mcp": {"tools": [{"name": "store"}]},
}


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process = MockProcess(CONFIG, tmp_path_factory.mktemp("mock"))
    yield process.url
    process.stop()


@pytest.mark.parametrize("size", [1, 9, 10, 11, 1024, 65536])
def test_bodies_and_arguments_are_exactly_their_size(size: int) -> None:
    assert len(padded_json(size)) == size
    if size >= 10:  # {"pad":""} is the smallest JSON object it pads
        json.loads(padded_json(size))
        op = Operation.model_validate(
            {"name": "c", "kind": "call", "tool": "t", "bodySizes": [{"size": size}]}
        )
        arguments = call_params(op, 1, size)["arguments"]
        assert len(json.dumps(arguments, separators=(",", ":"))) == size


def test_sizes_are_drawn_by_weight() -> None:
    mix = SizeMix([BodySize(size=SMALL, weight=90), BodySize(size=LARGE, weight=10)])
    rng = random.Random(3)
    draws = [mix.draw(rng) for _ in range(20_000)]
    assert set(draws) == {SMALL, LARGE}
    assert draws.count(LARGE) / len(draws) == pytest.approx(0.1, abs=0.01)


async def test_the_open_model_sends_the_size_mix(mock: str) -> None:
    workload = {
        "arrival": "uniform",
        "mix": [{"name": "upload", "method": "POST", "path": "/upload", "bodySizes": SIZES}],
    }
    result = await run(request(mock, workload, level=400, duration=1))
    assert result.state is TrialState.DONE, result.errors
    sent = result.sent
    assert result.operations["upload"].outcomes.ok == sent >= 390
    # Every request is one of two exact byte strings: the bytes out split into counts.
    host, port, _ = split_url(mock)
    small, large = (
        len(build_request("POST", "/upload", f"{host}:{port}", {}, padded_json(size)))
        for size in (SMALL, LARGE)
    )
    n_large, rest = divmod(result.bytes_out - sent * small, large - small)
    assert rest == 0
    # The echoes came back whole: at least every body's bytes.
    assert result.bytes_in > n_large * LARGE + (sent - n_large) * SMALL
    # 10% at 64 KiB: binomial, within 5 sigma.
    assert abs(n_large / sent - 0.1) < 5 * math.sqrt(0.09 / sent)


async def test_mcp_calls_send_sized_arguments(mock: str) -> None:
    workload = {
        "protocol": "mcp",
        "arrival": "uniform",
        "mix": [{"name": "store", "kind": "call", "tool": "store", "bodySizes": SIZES}],
    }
    result = await run(request(mock, workload, level=100, duration=1))
    assert result.state is TrialState.DONE, result.errors
    calls = result.operations["store"].outcomes
    assert calls.ok == calls.total >= 95
    # Each call carried at least its 1 KiB of arguments, and some 64 KiB ones.
    assert result.bytes_out > calls.total * SMALL + LARGE
