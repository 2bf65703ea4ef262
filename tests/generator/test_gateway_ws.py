"""The quickstart gateway's `/ws`: the streams probe holds half SSE, half WebSocket on it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plimsoll.api.trial import TrialState
from tests.generator.helpers import request, run
from tests.generator.mockproc import free_port, wait_port

GATEWAY = Path(__file__).resolve().parents[2] / "examples" / "targets" / "mini_gateway.py"


@pytest.fixture
def gateway() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PORT": str(port), "KEEP_ALIVE_SECONDS": "0.1", "STREAM_BUFFER_KIB": "4"}
    proc = subprocess.Popen([sys.executable, str(GATEWAY)], env=env, cwd=GATEWAY.parent)
    wait_port(port)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(5)


async def test_mixed_streams_on_the_gateway(gateway: str) -> None:
    workload = {
        "mix": [{"name": "page", "path": "/"}],
        "streams": {"count": 20, "kind": "mixed", "path": "/mcp", "wsPath": "/ws"},
        "users": {"keepAliveTimeout": "1s"},
    }
    result = await run(request(gateway, workload, level=0, duration=1))
    assert result.state is TrialState.DONE, result.errors
    health = result.streams
    assert (health.opened, health.held_at_end, health.failed_to_open) == (20, 20, 0)
    assert (health.dropped, health.missed_keep_alives) == (0, 0)
    # Ten WebSockets pinged every 0.1 s and ten event streams kept alive as often.
    assert health.keep_alives >= 20 * 5
