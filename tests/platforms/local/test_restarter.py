"""The restarter's waits, in fake time (looptime): only the event loop's clock moves, so a
two-minute deadline is checked in milliseconds. The process is a stand-in with the three
things the restarter reads: a wait for its exit, its exit code, and its last words."""

from __future__ import annotations

import asyncio

import pytest

from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.restarter import Restarter


class _Exit:
    def __init__(self) -> None:
        self.returncode: int | None = None
        self._done = asyncio.Event()

    async def wait(self) -> int:
        await self._done.wait()
        assert self.returncode is not None
        return self.returncode

    def end(self, code: int) -> None:
        self.returncode = code
        self._done.set()


class StandInProcess:
    name = "target"

    def __init__(self) -> None:
        self.process = _Exit()

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def died_message(self, what: str) -> str:
        return f"{self.name} {what} (exit code {self.returncode}); last lines: 'out of memory'"


@pytest.mark.looptime
async def test_a_restart_in_progress_is_waited_out() -> None:
    process = StandInProcess()
    restarted = asyncio.Event()

    async def restart() -> None:
        await asyncio.sleep(30)  # a slow start: 30 s of loop time
        process.process = _Exit()
        restarted.set()

    restarter = Restarter(process, restart)  # type: ignore[arg-type]
    restarter.start()
    process.process.end(-9)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await restarter.ensure_ready(within=120)
    assert restarted.is_set()
    assert loop.time() - started == pytest.approx(30, abs=0.5)
    assert len(restarter.restarts) == 1
    await restarter.stop()


@pytest.mark.looptime
async def test_a_restart_that_never_ends_is_an_error_at_the_deadline() -> None:
    process = StandInProcess()

    async def restart() -> None:
        await asyncio.sleep(3600)

    restarter = Restarter(process, restart)  # type: ignore[arg-type]
    restarter.start()
    process.process.end(-9)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(PlatformError, match="did not come back within 120s"):
        await restarter.ensure_ready(within=120)
    assert loop.time() - started == pytest.approx(120, abs=0.5)
    await restarter.stop()


@pytest.mark.looptime
async def test_giving_up_names_the_process_and_its_last_words() -> None:
    process = StandInProcess()

    async def restart() -> None:
        process.process = _Exit()
        process.process.end(137)

    restarter = Restarter(process, restart, max_restarts=2)  # type: ignore[arg-type]
    restarter.start()
    process.process.end(137)
    with pytest.raises(PlatformError, match=r"exited 3 times; giving up.*out of memory"):
        await restarter.ensure_ready(within=120)
    assert len(restarter.restarts) == 2
    await restarter.stop()
