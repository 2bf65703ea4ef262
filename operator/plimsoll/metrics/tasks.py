"""Stopping a background task without swallowing the caller's own cancellation.

The usual idiom, `task.cancel()` then `await task` inside `suppress(CancelledError)`,
has a hole: when the task doing the awaiting is itself cancelled meanwhile (Ctrl-C or
SIGTERM make asyncio cancel the run's main task), the suppress swallows that
cancellation too, and the run goes on as if nothing had happened. Every trial stops
its samplers and restarters, so a signal that lands during one of those stops was
lost. Called by `plimsoll.metrics.sampler` and `plimsoll.platforms.local.restarter`.
It lives here, the lowest layer that may use asyncio (plimsoll.shared does no I/O);
the generator, which may import only plimsoll.api and plimsoll.shared, has its own
three lines of it in `plimsoll_generator.cpu`.
"""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and wait for it to end; a cancellation of the caller passes on."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
