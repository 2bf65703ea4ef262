from __future__ import annotations

import gc
import warnings
from collections.abc import AsyncIterator

import pytest

from tests.generator.target import TargetState, start_target


@pytest.fixture
async def target() -> AsyncIterator[tuple[TargetState, str]]:
    state = TargetState()
    server, port = await start_target(state)
    yield state, f"http://127.0.0.1:{port}"
    server.close()


@pytest.fixture(autouse=True)
def _collect_stray_event_loop() -> None:
    # pytest-asyncio 1.5 leaves an unclosed event loop behind after a sync test;
    # collected later inside an async test it fails that test under -W error.
    # Collect it here, where it is nobody's fault. (Reported to the lead.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
