"""Keeps the local target running between trials, as the kubelet keeps a pod's container.

A target pinned to its memory limit is meant to be OOM-killed when a level is
too high; on Kubernetes the container restarts and the next, lower level is
tried. `Restarter` does the same locally: it restarts the target after an
unexpected exit, counts restarts (reported in the step's resource usage), and
gives up after `max_restarts`, so a target that cannot stay up stops the run
with its last log lines instead of failing every later step.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from plimsoll.metrics.tasks import cancel_and_wait
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.processes import ManagedProcess

log = logging.getLogger(__name__)


class Restarter:
    def __init__(
        self,
        process: ManagedProcess,
        restart: Callable[[], Awaitable[None]],
        *,
        max_restarts: int = 1000,
    ) -> None:
        self.process = process
        self.restarts: list[float] = []  # epoch seconds of each restart
        self.failure: str | None = None
        self._restart = restart
        self._max_restarts = max_restarts
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._ready.set()
        # Cleared while a fault holds the process down (`hold`): it is started again only
        # once `release` is called before the next trial, as a lost zone comes back.
        self._released = asyncio.Event()
        self._released.set()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            if self.process.process is None:
                return
            await self.process.process.wait()
            self._ready.clear()
            await self._released.wait()
            if len(self.restarts) >= self._max_restarts:
                self.failure = self.process.died_message(
                    f"exited {len(self.restarts) + 1} times; giving up"
                )
                self._ready.set()
                return
            log.warning(
                "%s exited (code %s): restarting", self.process.name, self.process.returncode
            )
            self.restarts.append(time.time())
            try:
                await self._restart()
            except PlatformError as exc:
                self.failure = str(exc)
                self._ready.set()
                return
            self._ready.set()

    def hold(self) -> None:
        """Keep the process down after it dies, until `release`."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def restarts_between(self, start: float, end: float) -> int:
        return sum(1 for at in self.restarts if start <= at <= end)

    async def ensure_ready(self, within: float) -> None:
        """Wait out a restart in progress; raise if the target cannot be brought back."""
        if self.failure is None and self.process.returncode is not None:
            # Exited, and the watcher has not woken yet: no trial may start against it now.
            self._ready.clear()
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can return the result and
            # drop a cancellation (Ctrl-C) that lands as the wait completes.
            async with asyncio.timeout(within):
                await self._ready.wait()
        except TimeoutError as exc:
            raise PlatformError(
                f"{self.process.name} did not come back within {within:g}s"
            ) from exc
        if self.failure is not None:
            raise PlatformError(self.failure)

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
