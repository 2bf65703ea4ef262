from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.generator.target import TargetState, start_target


@pytest.fixture
async def target() -> AsyncIterator[tuple[TargetState, str]]:
    state = TargetState()
    server, port = await start_target(state)
    yield state, f"http://127.0.0.1:{port}"
    server.close()
