"""The quickstart gateway's `/ws`: the streams probe holds half SSE, half WebSocket on it."""

from __future__ import annotations

from plimsoll.api.trial import TrialState
from tests.generator.helpers import request, run


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
