"""Fixtures for the whole suite.

`mark` is for the tests that run Plimsoll's processes for real: it works from the
repository (specs name their commands relative to it) and tags every process the
test starts, so `tests.localrun.marked_processes(mark)` finds any left behind.
Modules whose every test needs it say `pytestmark = pytest.mark.usefixtures("mark")`.

One workaround lives here because it concerns every folder: looptime 0.9 asks
pytest-asyncio 1.5's policy for an event loop even around sync tests, which
creates one nobody closes; the next async test orphans it and its
ResourceWarning, an error under `filterwarnings = error`, fails a test that did
nothing wrong. Closing that implicit loop after each sync test removes the leak.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
import warnings
from collections.abc import Iterator

import pytest

from tests.controller.apiserver_fixtures import control_plane_installed
from tests.localrun import ROOT

# One real control plane per session, for every folder's tests that need one.
__all__ = ["control_plane_installed"]


@pytest.fixture
def mark(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(ROOT)
    mark = uuid.uuid4().hex
    monkeypatch.setenv("PLIMSOLL_TEST_MARK", mark)
    return mark


@pytest.fixture(autouse=True)
def _close_implicit_loop(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if inspect.iscoroutinefunction(request.function):
        return
    policy = asyncio.get_event_loop_policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = policy.get_event_loop()
        except RuntimeError:
            return
    if not loop.is_running():
        loop.close()
        policy.set_event_loop(None)
